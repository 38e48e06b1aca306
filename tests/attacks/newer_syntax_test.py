"""Python newer than the running interpreter is checked as Python, not as lines of text."""

from __future__ import annotations

import pytest

from reviewbot.schema.findings import Finding
from tests.rules.conftest import findings, review

SHELL = 'subprocess.run(f"ls {path}", shell=True)\n'
# One construct of each newer version, each a line or a statement of its own.
CONSTRUCTS = {
    "type alias": "type Hosts = list[str]\n",
    "generic function": "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
    "generic class": "class Box[T]:\n    pass\n",
    "type parameter default": "class Slot[T=int]:\n    pass\n",
    "f-string reusing its quotes": 'label = f"{row["name"]}"\n',
    "f-string with a backslash": "joined = f\"{'\\n'.join(names)}\"\n",
    "except without parentheses": "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
    "template string": 'greeting = t"hello {name}"\n',
}


def _shell(found: list[Finding]) -> list[tuple[int, str, bool]]:
    return [(f.start_line, f.severity, "line pattern" in f.message) for f in found
            if f.rule_id == "python.shell-injection"]


@pytest.mark.parametrize("construct", CONSTRUCTS.values(), ids=CONSTRUCTS.keys())
def test_a_new_file_in_newer_syntax_keeps_its_severities(construct: str) -> None:
    """Valid Python of a version newer than reviewbot's interpreter is read as Python: its
    shell injection is the tree rule's error on its own line, and no note calls the file
    broken."""
    code = "import subprocess\n" + construct + SHELL
    result = review("app/tool.py", code)
    line = code.count("\n")
    assert _shell(list(result.findings)) == [(line, "error", False)]
    assert result.notes == ()


@pytest.mark.parametrize("construct", CONSTRUCTS.values(), ids=CONSTRUCTS.keys())
def test_one_newer_line_added_to_a_module_does_not_quieten_its_findings(construct: str) -> None:
    """Anyone can add one `type X = int` line to a module: it must not turn the module's
    injection errors into line-pattern warnings."""
    old = "import subprocess\n\n\ndef run(path):\n    return path\n"
    new = old.replace("\n\n\n", "\n" + construct + "\n\n").replace(
        "    return path\n", "    " + SHELL)
    line = new.splitlines().index("    " + SHELL.rstrip("\n")) + 1
    assert _shell(findings("app/tool.py", new, old)) == [(line, "error", False)]


def test_findings_keep_their_real_lines_after_the_rewrite() -> None:
    """A rewritten type parameter list over several lines keeps every line where it was: a
    finding under it points at the line that holds the call."""
    code = ("import subprocess\n\n\ndef run[\n    T,\n    U,\n](path: T, other: U):\n"
            '    label = f"{path["x"]}"\n    ' + SHELL)
    assert _shell(findings("app/tool.py", code)) == [(9, "error", False)]


@pytest.mark.parametrize("code", [
    "import os\n\n\ndef f[T: (os.system(f'rm {path}'))]():\n    pass\n",
    "import os\n\n\ndef f[\n    T: (\n        os.system(f'rm {path}')),\n]():\n    pass\n",
    "import os\ntype Cleanup = os.system(f'rm {path}')\n",
    "import os\ntype Cleanup[T: os.system(f'rm {path}')] = list[T]\n",
])
def test_code_in_a_type_bound_or_alias_value_is_still_checked(code: str) -> None:
    """The rewrite only removes type-level syntax: a call a hostile author hides in a type
    parameter's bound or a type alias's value is checked by the tree rules, on its line."""
    line = next(n for n, text in enumerate(code.splitlines(), 1) if "os.system" in text)
    result = review("app/tool.py", code)
    assert _shell(list(result.findings)) == [(line, "error", False)]
    assert result.notes == ()


def test_code_in_a_type_parameter_default_is_checked_by_line_patterns() -> None:
    """A 3.13 type parameter default the rewrite cannot tell from a bound is blanked, and
    its line is named and read by patterns, never dropped."""
    code = "import os\n\n\ndef f[T=os.system(f'rm {path}')]():\n    pass\n"
    result = review("app/tool.py", code)
    assert _shell(list(result.findings)) == [(4, "error", True)]
    assert result.notes == ("app/tool.py uses Python 3.13 syntax (type parameters, type "
                            "parameter defaults) that Python 3.11 cannot parse: read through "
                            "a rewrite, and line 4 (code the rewrite cannot carry over) "
                            "checked with line patterns only",)


def test_a_template_string_is_not_a_formatted_command_but_its_values_are_code() -> None:
    """A t-string is a template (an API taking one escapes its values), not formatted text;
    the code in its values is still checked with the tree rules."""
    code = ("import subprocess\nquery = t\"SELECT * FROM t WHERE a = {a}\"\ncur.execute(query)\n"
            'note = t"{subprocess.run(f\'ls {path}\', shell=True)}"\n')
    found = findings("app/db.py", code)
    assert [(f.rule_id, f.start_line, f.severity) for f in found] == [
        ("python.shell-injection", 4, "error")]


VIEW = ("import subprocess\nfrom flask import request, send_file\n\n\ndef view(cursor):\n"
        "    host = request.args['h']\n")
# (the plain sink, its f-string with a line break inside the braces: valid on 3.12)
BROKEN_BRACES = {
    "SQL": ("    cursor.execute(f'SELECT * FROM t WHERE a = {host}')\n",
            "    cursor.execute(f'SELECT * FROM t WHERE a = {host\n}')\n"),
    "a path": ("    return send_file(f'/srv/{host}')\n",
               "    return send_file(f'/srv/{\n    host}')\n"),
    "eval": ("    eval(f'{host}')\n", "    eval(f'{host\n}')\n"),
    "a shell": ("    subprocess.run(f'ping {host}', shell=True)\n",
                "    subprocess.run(f'ping {host  # the host\n}', shell=True)\n"),
    "quotes nested three deep": (
        "    subprocess.run(f'ping {host}', shell=True)\n",
        "    subprocess.run(f\"ping {f'{f\"{host}\"}'}\", shell=True)\n"),
    "a line break three deep, with a format": (
        "    subprocess.run(f'ping {host}', shell=True)\n",
        "    subprocess.run(f\"ping {f'{f\"{host\n}\"!r:>{len(\nhost)}}'}\", shell=True)\n"),
}


@pytest.mark.parametrize(("plain", "twin"), BROKEN_BRACES.values(), ids=BROKEN_BRACES.keys())
def test_an_fstring_no_older_syntax_holds_is_read_at_full_strength(plain: str,
                                                                    twin: str) -> None:
    """An f-string the rewrite cannot put in 3.11 syntax (a line break inside a one-line
    string's braces, quotes nested three deep) is built as the tree 3.12 gives it: the
    finding is the plain f-string's, by the same rule at the same severity on the same
    line, and no line is left to line patterns."""
    expected = [(f.rule_id, f.severity, f.start_line) for f in findings("app/views.py",
                                                                         VIEW + plain)]
    assert len(expected) == 1
    result = review("app/views.py", VIEW + twin)
    assert [(f.rule_id, f.severity, f.start_line) for f in result.findings] == expected
    assert result.notes == ()


@pytest.mark.parametrize(("code", "note"), [
    ('import subprocess\nprint "x"\n' + SHELL,
     "app/tool.py is not Python 3 that parses (Python 2: a print statement on line 2): "
     "checked with line patterns only"),
    ("import subprocess\ndef f(:\n" + SHELL,
     "app/tool.py is not valid Python (line 2: invalid syntax): checked with line patterns "
     "only"),
    ("import subprocess\ntype Hosts = list[str]\nf(x for x in y, 1)\n" + SHELL,
     "app/tool.py is not valid Python, even read as Python 3.12 (line 3: Generator "
     "expression must be parenthesized): checked with line patterns only"),
])
def test_python_that_is_not_newer_still_falls_back_with_an_honest_note(code: str,
                                                                        note: str) -> None:
    """Python 2 and broken Python stay "does not parse", and the note says which it is."""
    result = review("app/tool.py", code)
    assert result.notes == (note,)
    assert [line for line, _, pattern in _shell(list(result.findings)) if pattern] == [
        code.count("\n")]


@pytest.mark.parametrize(("command", "severity"), [
    (SHELL, "error"),
    ("subprocess.call(cmd, shell=True)\n", "warning"),
])
def test_the_fallback_rates_a_formatted_shell_command_as_the_tree_rule_does(
        command: str, severity: str) -> None:
    """A line that runs an f-string through a shell shows all the evidence the tree rule
    rates an error: a line pattern gives it the same, whatever else fails to parse; a
    command it cannot see into stays a warning."""
    code = "import subprocess\ndef f(:\n" + command
    assert _shell(findings("app/tool.py", code)) == [(3, severity, True)]
