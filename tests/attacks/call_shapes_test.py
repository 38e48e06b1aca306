"""The pull-request author who has read docs/RULES.md gives a dangerous call another shape:
`shell=1`, `**{"shell": True}`, `getattr(subprocess, "run")`, `fn = subprocess.run`,
`partial(subprocess.run, shell=True)`, `["sh", "-c", cmd]`, a YAML loader under another
name. Each shaped twin is the same danger as its plain case and is reported by the same rule
at the same severity; the near misses that are not that danger stay quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

VIEW = ("import subprocess\nimport os\nimport builtins\nimport functools\n"
        "from flask import request\n\n\ndef view():\n    host = request.args['h']\n")


def _found(body: str, rule: str, head: str = VIEW) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", head + body, base=Base(everything=True))
            if hit[0] == rule}


SHELL_PLAIN = "    subprocess.run(f'ping {host}', shell=True)\n"
SHELL_TWINS = {
    "a true number": "    subprocess.run(f'ping {host}', shell=1)\n",
    "a true string": "    subprocess.run(f'ping {host}', shell='yes')\n",
    "a dict spread": "    subprocess.run(f'ping {host}', **{'shell': True})\n",
    "a dict() spread": "    subprocess.run(f'ping {host}', **dict(shell=True))\n",
    "a name bound to a dict": "    opts = {'shell': True}\n"
                              "    subprocess.run(f'ping {host}', **opts)\n",
    "a constant flag": "    SHELL = True\n    subprocess.run(f'ping {host}', shell=SHELL)\n",
    "a negated false": "    subprocess.run(f'ping {host}', shell=not False)\n",
    "Popen's ninth argument": "    subprocess.Popen(f'ping {host}', -1, None, None, None, None, "
                              "None, True, True)\n",
    "getattr": "    getattr(subprocess, 'run')(f'ping {host}', shell=True)\n",
    "a name bound to the function": "    fn = subprocess.run\n    fn(f'ping {host}', shell=True)\n",
    "a name bound through getattr": "    fn = getattr(subprocess, 'Popen')\n"
                                    "    fn(f'ping {host}', shell=True)\n",
    "an alias of the module": "    import subprocess as sp\n"
                              "    sp.run(f'ping {host}', shell=True)\n",
    "an imported function renamed": "    from subprocess import run as r\n"
                                    "    r(f'ping {host}', shell=True)\n",
    "partial, inline": "    functools.partial(subprocess.run, shell=True)(f'ping {host}')\n",
    "partial, bound to a name": "    run = functools.partial(subprocess.run, shell=True)\n"
                                "    run(f'ping {host}')\n",
    "partial of a partial": "    a = functools.partial(subprocess.run)\n"
                            "    b = functools.partial(a, shell=True)\n    b(f'ping {host}')\n",
    "sh -c in an argument list": "    subprocess.run(['sh', '-c', f'ping {host}'])\n",
    "bash -lc by its path": "    subprocess.run(['/bin/bash', '-lc', f'ping {host}'])\n",
    "an argument list in a name": "    argv = ['sh', '-c', f'ping {host}']\n"
                                  "    subprocess.run(argv)\n",
    "a shell under env": "    subprocess.run(['env', 'X=1', 'sh', '-c', f'ping {host}'])\n",
    "a shell as the executable": "    subprocess.run(['x', '-c', f'ping {host}'], "
                                 "executable='/bin/sh')\n",
    "cmd /c": "    subprocess.run(['cmd.exe', '/c', f'ping {host}'])\n",
    "os.execl": "    os.execl('/bin/sh', 'sh', '-c', f'ping {host}')\n",
    "os.execv": "    os.execv('/bin/sh', ['sh', '-c', f'ping {host}'])\n",
    "os.spawnlp": "    os.spawnlp(os.P_WAIT, 'sh', 'sh', '-c', f'ping {host}')\n",
    "os.posix_spawn": "    os.posix_spawn('/bin/sh', ['sh', '-c', f'ping {host}'], {})\n",
    "create_subprocess_exec": "    import asyncio\n"
                              "    asyncio.create_subprocess_exec('bash', '-c', f'ping {host}')\n",
    "__import__": "    __import__('os').system(f'ping {host}')\n",
    "import_module": "    import importlib\n"
                     "    importlib.import_module('os').system(f'ping {host}')\n",
    "os.popen": "    os.popen(f'ping {host}')\n",
    "a dispatch table": "    table = {'run': os.system}\n    table['run'](f'ping {host}')\n",
    "a dispatch table inline": "    {'run': os.system}['run'](f'ping {host}')\n",
    "a command unpacked from a tuple": "    cmd, _ = f'ping {host}', 1\n    os.system(cmd)\n",
    "create_subprocess_shell": "    import asyncio\n"
                               "    asyncio.create_subprocess_shell(f'ping {host}')\n",
}


@pytest.mark.parametrize("twin", SHELL_TWINS.values(), ids=SHELL_TWINS.keys())
def test_a_shell_in_another_shape_is_the_same_error(twin: str) -> None:
    plain = _found(SHELL_PLAIN, "python.shell-injection")
    assert plain == {("python.shell-injection", "error")}
    assert _found(twin, "python.shell-injection") == plain


@pytest.mark.parametrize("near", [
    "    subprocess.run(['sh', 'deploy.sh', host])\n",  # a script, its argument an operand
    "    subprocess.run(['sh', '-c', 'ping \"$1\"', 'sh', host])\n",  # constant command
    "    subprocess.run(f'ping {host}', shell=0)\n",
    "    subprocess.run(f'ping {host}', **{'shell': False})\n",
    "    opts = {'check': True}\n    subprocess.run(['ping', '--', host], **opts)\n",
    "    fn = subprocess.run\n    fn(['ping', '--', host])\n",
])
def test_a_shell_that_is_not_one_stays_quiet(near: str) -> None:
    assert _found(near, "python.shell-injection") == set()


FORMATTED = {
    "format_map": "    subprocess.run('ping {h}'.format_map({'h': host}), shell=True)\n",
    "a string.Template": "    import string\n"
                         "    subprocess.run(string.Template('ping $h').substitute(h=host), "
                         "shell=True)\n",
    "str.format": "    subprocess.run(str.format('ping {}', host), shell=True)\n",
    "join": "    subprocess.run(' '.join(['ping', host]), shell=True)\n",
    "+=": "    cmd = 'ping '\n    cmd += host\n    subprocess.run(cmd, shell=True)\n",
}


@pytest.mark.parametrize("twin", FORMATTED.values(), ids=FORMATTED.keys())
def test_a_command_formatted_in_other_words_is_formatted(twin: str) -> None:
    """Formatting is formatting whatever it is called: with a parameter (not input) in
    it, the command is an error as an f-string is, not the warning of a value passed."""
    head = "import subprocess\n\n\ndef ping(host):\n"
    plain = _found("    subprocess.run(f'ping {host}', shell=True)\n", "python.shell-injection",
                   head)
    assert plain == {("python.shell-injection", "error")}
    assert _found(twin, "python.shell-injection", head) == plain


def test_a_shell_flag_that_cannot_be_read_is_one_level_lower() -> None:
    """`shell=use_shell` may be true (bandit reads it so): still reported, one level below
    the true flag, since the caller decides."""
    body = "    subprocess.run(f'ping {host}', shell=use_shell)\n"
    assert _found(body, "python.shell-injection") == {("python.shell-injection", "warning")}


EVAL_PLAIN = "    eval(host)\n"
EVAL_TWINS = {
    "a name bound to eval": "    run = eval\n    run(host)\n",
    "builtins.eval": "    builtins.eval(host)\n",
    "getattr of builtins": "    getattr(builtins, 'eval')(host)\n",
    "exec": "    exec(host)\n",
}


@pytest.mark.parametrize("twin", EVAL_TWINS.values(), ids=EVAL_TWINS.keys())
def test_eval_in_another_shape_is_the_same_error(twin: str) -> None:
    plain = _found(EVAL_PLAIN, "python.eval-exec")
    assert plain == {("python.eval-exec", "error")}
    assert _found(twin, "python.eval-exec") == plain


LOADERS = ("import yaml\nfrom yaml import Loader as SafeLoader\nNotSafeLoader = yaml.Loader\n\n\n"
           "class Mine(yaml.Loader):\n    pass\n\n\nclass Safe(yaml.SafeLoader):\n    pass\n\n\n"
           "def load(data, loader=yaml.UnsafeLoader):\n")
YAML_PLAIN = "    return yaml.load(data, Loader=yaml.Loader)\n"
YAML_TWINS = {
    "no loader": "    return yaml.load(data)\n",
    "load_all": "    return yaml.load_all(data)\n",
    "unsafe_load_all": "    return yaml.unsafe_load_all(data)\n",
    "a module-level name for the loader": "    return yaml.load(data, Loader=NotSafeLoader)\n",
    "the loader imported as SafeLoader": "    return yaml.load(data, Loader=SafeLoader)\n",
    "a class of one's own over the loader": "    return yaml.load(data, Loader=Mine)\n",
    "a parameter's default": "    return yaml.load(data, Loader=loader)\n",
    "a local name, positionally": "    unsafe = yaml.UnsafeLoader\n"
                                  "    return yaml.load_all(data, unsafe)\n",
    "the loader built on the stream": "    return yaml.Loader(data).get_single_data()\n",
    "load renamed": "    from yaml import load as read\n    return read(data, yaml.Loader)\n",
}


@pytest.mark.parametrize("twin", YAML_TWINS.values(), ids=YAML_TWINS.keys())
def test_an_unsafe_yaml_loader_under_another_name_is_the_same_finding(twin: str) -> None:
    plain = _found(YAML_PLAIN, "python.unsafe-deserialization", LOADERS)
    assert plain == {("python.unsafe-deserialization", "warning")}
    assert _found(twin, "python.unsafe-deserialization", LOADERS) == plain


@pytest.mark.parametrize("near", [
    "    return yaml.load(data, Loader=yaml.SafeLoader)\n",
    "    return yaml.load_all(data, Loader=yaml.CSafeLoader)\n",
    "    return yaml.load(data, Loader=Safe)\n",
    "    return yaml.safe_load(data)\n",
])
def test_a_safe_yaml_loader_stays_quiet(near: str) -> None:
    assert _found(near, "python.unsafe-deserialization", LOADERS) == set()
