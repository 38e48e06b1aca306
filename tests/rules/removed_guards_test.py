"""guard-removed: a change that takes escaping or sanitising off a value it keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.rules.removed_guards import conjuncts, removals
from tests.conftest import GitFixture
from tests.rules.conftest import findings, make_diff

GUARD = ("guard-removed", "warning")


def _ids(path: str, old: str, new: str) -> set[tuple[str, str]]:
    return {(f.rule_id, f.severity) for f in findings(path, new, old)
            if f.rule_id == "guard-removed"}


@pytest.mark.parametrize(("old", "new"), [
    # django's {% debug %} before CVE-2022-22818 was fixed
    ("    output = [escape(pformat(val)) for val in context]\n",
     "    output = [pformat(val) for val in context]\n"),
    # a name kept in another expression
    ("    return _key_pattern.sub(' ', escape(key, quote=True))\n",
     "    return _key_pattern.sub(' ', key.lower())\n"),
    # a dict value rendered into a page
    ("    'plaintext': escape(self.plaintext),\n", "    'plaintext': self.plaintext,\n"),
    # a safe join replaced by a plain one
    ("    path = safe_join(directory, path)\n", "    path = os.path.join(directory, path)\n"),
    # a method that sanitises
    ("    return os.path.join(tmp, self._sanitize(name))\n",
     "    return os.path.join(tmp, name)\n"),
])
def test_a_guard_taken_off_a_kept_value_is_reported(old: str, new: str) -> None:
    before = f"def f(self, directory, path, key, val, name, tmp):\n{old}"
    after = f"def f(self, directory, path, key, val, name, tmp):\n{new}"
    assert _ids("app/views.py", before, after) == {GUARD}


@pytest.mark.parametrize(("old", "new"), [
    # another escape took its place
    ("    return escape(name)\n", "    return html.escape(name)\n"),
    ("    return escape(name)\n", "    return conditional_escape(name)\n"),
    # the guard moved to another line of the hunk
    ("    return '<b>%s</b>' % escape(name)\n",
     "    safe = escape(name)\n    return '<b>%s</b>' % safe\n"),
    # a guard renamed
    ("    return quote(name, safe='')\n", "    return percent_encoded(name, safe='')\n"),
    # a guard's own definition
    ("def quote(name):\n    return name\n", "def percent(name):\n    return name\n"),
    # the value went away with its guard
    ("    return escape(name)\n", "    return ''\n"),
    # nothing removed, only added
    ("    pass\n", "    pass\n    x = name\n"),
    # an escape call that spans lines is not read
    ("    return escape(\n        name)\n", "    return name\n"),
])
def test_quiet_when_the_value_is_still_guarded_or_gone(old: str, new: str) -> None:
    before = f"def f(name):\n{old}"
    after = f"def f(name):\n{new}"
    assert _ids("app/views.py", before, after) == set()


def test_prose_is_not_read() -> None:
    assert _ids("docs/notes.md", "Call escape(name) first.\n", "Call name first.\n") == set()


def test_the_first_argument_is_read_through_brackets_and_strings() -> None:
    found = list(removals("x = markupsafe.escape(fmt(a, ')'), quote=True) + quote(b)"))
    assert [(r.guard, r.value) for r in found] == [("markupsafe.escape", "fmt(a, ')')"),
                                                    ("quote", "b")]
    assert list(removals("unescape(x); my_unsanitized(y); escape(")) == []


def test_reported_on_the_added_line_that_replaced_the_removed_one() -> None:
    old = ("def contains(field, value):\n"
           "    return Like(field, StrWrapper(f'%{escape_like(value)}%'), escape='')\n")
    new = ("def contains(field: Field, value: str) -> Criterion:\n"
           "    return field.like(f'%{value}%')\n")
    [finding] = [f for f in findings("app/executor.py", new, old)
                 if f.rule_id == "guard-removed"]
    assert finding.start_line == 2


@pytest.mark.parametrize(("old", "new", "expected"), [
    # django's order_by() before CVE-2021-35042 was fixed
    ("    if '.' in item and ORDER_PATTERN.match(item):\n", "    if '.' in item:\n", {GUARD}),
    ("    if (name && isValid(name)) {\n", "    if (name) {\n", {GUARD}),
    ("    elif user and is_safe(path) and allowed(path):\n",
     "    elif user and allowed(path):\n", {GUARD}),
    # a condition that is not a check, dropped
    ("    if ready and count > 3:\n", "    if ready:\n", set()),
    # a check kept, another part dropped
    ("    if PATTERN.match(item) and debug:\n", "    if PATTERN.match(item):\n", set()),
    # a condition rewritten, not narrowed
    ("    if a and PATTERN.match(b):\n", "    if c:\n", set()),
    # `and` inside a call is not a conjunct
    ("    if f(a and b) and is_ok(x):\n", "    if f(a and b) and is_ok(x) and y:\n", set()),
])
def test_a_check_dropped_from_a_condition(old: str, new: str,
                                          expected: set[tuple[str, str]]) -> None:
    assert _ids("app/query.js" if "{" in old else "app/query.py", f"x = 1\n{old}    pass\n",
                f"x = 1\n{new}    pass\n") == expected


def test_conjuncts_split_at_the_top_level_only() -> None:
    assert conjuncts("if f(a and b) and x.is_ok():") == ("f(a and b)", "x.is_ok()")
    assert conjuncts("x = a and b") is None


def test_a_hunk_reports_at_most_fifty_removals() -> None:
    old = "".join(f"    x{i} = escape(v{i})\n" for i in range(80))
    new = "".join(f"    x{i} = v{i}\n" for i in range(80))
    found = [f for f in findings("app/big.py", f"def f():\n{new}", f"def f():\n{old}")
             if f.rule_id == "guard-removed"]
    assert len(found) == 50
    assert {f.start_line for f in found} == set(range(2, 52))


def test_a_condition_is_paired_only_with_an_if_near_it() -> None:
    before = "".join(f"    y{i} = {i}\n" for i in range(40))
    after = "".join(f"    y{i} = {i + 1}\n" for i in range(40))
    old = f"    if a and is_ok(b):\n        pass\n{before}"
    new = f"{after}    if a:\n        pass\n"
    assert _ids("app/far.py", f"def f():\n{new}", f"def f():\n{old}") == set()


def test_the_code_it_quotes_is_redacted_everywhere(repo: GitFixture, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The messages quote removed code: a secret in it leaves the process redacted."""
    key, token = "AKIAQWERTYUIOPASDFGH", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    repo.write("app/v.py", f"def f(request):\n    x = escape('{key}' + request.name)\n"
                           f"    if a and is_ok('{token}'):\n        pass\n")
    repo.stage()
    repo.commit()
    repo.write("app/v.py", f"def f(request):\n    x = '{key}' + request.name\n"
                           "    if a:\n        pass\n")
    repo.stage()
    runs = tmp_path / "runs"
    main(["--repo", str(repo.root), "--mode", "staged", "--offline", "--format", "json",
          "--output-dir", str(runs)])
    out = capsys.readouterr().out
    messages = [f["message"] for f in json.loads(out)["findings"]
                if f["rule_id"] == "guard-removed"]
    assert len(messages) == 2 and all("[REDACTED]" in m for m in messages)
    written = [out, *(p.read_text() for p in runs.rglob("*") if p.is_file())]
    assert not any(key in text or token in text for text in written)


def _messages(path: str, old: str, new: str) -> list[str]:
    return [f.message for f in findings(path, new, old) if f.rule_id == "guard-removed"]


@pytest.mark.parametrize(("old", "new", "said"), [
    # a whole guard deleted, the value kept
    ("    if not is_safe_path(base, name):\n        raise Forbidden()\n"
     "    path = os.path.join(base, name)\n",
     "    path = os.path.join(base, name)\n    log(name)\n",
     "deletes the guard `if not is_safe_path(base, name)` and its exit, and keeps using "
     "`name`"),
    ("    if is_outside(root, name):\n        return None\n    return open(name)\n",
     "    data = name\n    return open(name)\n",
     "deletes the guard `if is_outside(root, name)` and its exit, and keeps using `name`"),
    # the guard deleted with the line that computed its value (gradio, CVE-2024-1728)
    ("    if check and not is_http(value.path):\n"
     "        path = os.path.abspath(value.path)\n"
     "        if not is_in_or_equal(path, get_upload_folder()):\n"
     "            raise ValueError(path)\n    target = block.move(value.path)\n",
     "    target = move(value.path, block)\n",
     "deletes the guard `if not is_in_or_equal(path, get_upload_folder())` and its exit, "
     "and keeps using `value.path`"),
    # the sanitiser removed together with an inner call
    ("    return escape(render(value))\n", "    return value\n",
     "takes `escape(...)` off `value`"),
    # a project's checking join replaced by a bare one
    ("    target = self._safe_join_path(root, name)\n",
     "    target = os.path.join(root, name)\n",
     "replaces `self._safe_join_path(...)` with a bare join"),
    # template settings that lost autoescape
    ("    options = {'loader': loader, 'autoescape': True}\n",
     "    options = {'loader': loader}\n", "removes `autoescape`"),
])
def test_guards_removed_in_other_shapes(old: str, new: str, said: str) -> None:
    before = f"def f(self, base, root, name, value, loader):\n{old}"
    after = f"def f(self, base, root, name, value, loader):\n{new}"
    messages = _messages("app/views.py", before, after)
    assert len(messages) == 1 and said in messages[0], messages


@pytest.mark.parametrize(("old", "new"), [
    # the guard moved into a helper the new code calls
    ("    if not is_safe_path(base, name):\n        raise Forbidden()\n    return name\n",
     "    check(base, name)\n    is_safe_path(base, name)\n    return name\n"),
    # another guard on the same value took its place
    ("    target = (base / name).resolve()\n"
     "    if not target.is_relative_to(base) or not target.is_file():\n"
     "        return None\n    return target.read_bytes()\n",
     "    target = base / name\n    if target.parent.resolve() != target.parent:\n"
     "        raise PermissionError(name)\n    return target.read_bytes()\n"),
    # a deleted `if` that was no guard (no exit under it)
    ("    if not valid(name):\n        log(name)\n    return name\n", "    return name\n"),
    # autoescape moved, not removed
    ("    env = Environment(autoescape=True)\n",
     "    env = Environment(\n        autoescape=select_autoescape())\n"),
    # a checking join kept beside the bare join of other parts
    ("    target = safe_join(root, name)\n",
     "    target = safe_join(root, name)\n    cache = os.path.join(tmp, key)\n"),
])
def test_other_shapes_stay_quiet_when_the_guard_stays(old: str, new: str) -> None:
    before = f"def f(base, root, name, tmp, key):\n{old}"
    after = f"def f(base, root, name, tmp, key):\n{new}"
    assert _messages("app/views.py", before, after) == []


def test_a_guard_removed_in_one_hunk_and_its_value_used_raw_in_another() -> None:
    middle = "".join(f"    step{n} = {n}\n" for n in range(12))
    before = (f"def f(name):\n    safe = secure_filename(name)\n{middle}"
              "    return open(os.path.join(UPLOADS, safe))\n")
    after = (f"def f(name):\n{middle}"
             "    return open(os.path.join(UPLOADS, name))\n")
    messages = _messages("app/upload.py", before, after)
    assert any("in one place and uses the value raw here" in m for m in messages), messages


@pytest.mark.parametrize("moved", [
    "        elif not os.path.isabs(instance_path):\n",
    "    if not os.path.isabs(instance_path):\n",
])
def test_a_guard_moved_to_another_file_of_the_change_is_not_deleted(moved: str) -> None:
    # flask 3.0: the instance path check went from app.py into the new sansio/app.py
    old = ("def init(self, instance_path):\n    if instance_path is None:\n"
           "        instance_path = find()\n    elif not os.path.isabs(instance_path):\n"
           "        raise ValueError('must be absolute')\n    self.path = instance_path\n")
    new = ("def init(self, instance_path):\n    if instance_path is None:\n"
           "        instance_path = find()\n    super().__init__(instance_path)\n")
    base = f"def init(self, instance_path):\n    x = 1\n{moved}        raise ValueError()\n"
    diff = make_diff("app.py", new, old) + make_diff("sansio/app.py", base)
    texts = {"app.py": new, "sansio/app.py": base}
    result = run_rules(parse_units(diff), texts.get, Config())
    assert [f for f in result.findings if f.rule_id == "guard-removed"] == []
    alone = run_rules(parse_units(make_diff("app.py", new, old)), texts.get, Config())
    assert [f.message for f in alone.findings if f.rule_id == "guard-removed"] == [
        "This change deletes the guard `elif not os.path.isabs(instance_path)` and its exit, "
        "and keeps using `instance_path`: what the guard turned away now gets through."]


TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(("old", "new", "rule"), [
    # a deleted guard is quoted whole
    (f"def f(base, name):\n    if not is_safe(name, '{TOKEN}'):\n        raise E()\n"
     "    return open(name)\n", "def f(base, name):\n    return open(name).read()\n",
     "guard-removed"),
    # a templated command's value is quoted
    ("run = BashOperator(task_id='r', bash_command='echo 1')\n",
     "run = BashOperator(task_id='r',\n"
     f"    bash_command=\"echo {{{{ params.get('t', '{TOKEN}') }}}}\")\n",
     "python.shell-injection"),
])
def test_new_messages_that_quote_code_leave_the_process_redacted(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        old: str, new: str, rule: str) -> None:
    repo.write("app/v.py", old)
    repo.commit()
    repo.write("app/v.py", new)
    repo.stage()
    runs = tmp_path / "runs"
    main(["--repo", str(repo.root), "--mode", "staged", "--offline", "--format", "json",
          "--output-dir", str(runs)])
    out = capsys.readouterr().out
    messages = [f["message"] for f in json.loads(out)["findings"] if f["rule_id"] == rule]
    assert messages and all("[REDACTED]" in m for m in messages), messages
    written = [out, *(p.read_text() for p in runs.rglob("*") if p.is_file())]
    assert not any(TOKEN in text for text in written)


OTHER = "\n\ndef other():\n    return 1\n"


@pytest.mark.parametrize(("old", "new"), [
    # black's tokenizer replaced: detect_encoding and its guard on `first` deleted whole, a
    # new function with a `first` of its own
    ("def detect(readline):\n    first = readline()\n    if not blank_re.match(first):\n"
     "        return default, [first]\n    return first\n" + OTHER,
     "def tokenize(source):\n    first = source[0]\n    yield first\n" + OTHER),
    # the last function of the file deleted whole
    ("def keep():\n    return 2\n\n\ndef detect(first):\n    if not is_blank(first):\n"
     "        return None\n    return first\n",
     "def keep():\n    return 2\n\n\ndef tokenize(first):\n    pass\n"),
    # a guard deleted and its value named only in an added comment
    ("def f(name):\n    if not is_safe(name):\n        raise E()\n    return 1\n",
     "def f(name):\n    # name is checked by the caller\n    return 1\n"),
])
def test_a_guard_gone_with_its_function_or_its_uses_is_not_removed(old: str, new: str) -> None:
    """A guard deleted together with the whole function that held it, or with every use of
    its value (a word in a comment is no use), turns nothing away that now gets through."""
    assert _messages("src/tokenize.py", old, new) == []


@pytest.mark.parametrize(("old", "new"), [
    # the function rewritten whole under the same name, without its guard
    ("def load(path):\n    if not is_safe(path):\n        raise Forbidden()\n"
     "    return open(path).read()\n" + OTHER,
     "def load(path, mode='r'):\n    with open(path, mode) as f:\n        return f.read()\n"
     + OTHER),
    # the check named in a comment or a docstring is not the check made
    ("def f(name):\n    if not is_safe(name):\n        raise E()\n    return open(name)\n",
     "def f(name):\n    # is_safe(name) is done upstream\n    return open(name).read()\n"),
    ("def f(name):\n    if not is_safe(name):\n        raise E()\n    return open(name)\n",
     'def f(name):\n    """Callers run is_safe(name) first."""\n    return open(name).read()\n'),
])
def test_a_rewritten_function_or_a_comment_cannot_hide_a_deleted_guard(old: str,
                                                                      new: str) -> None:
    """A function rewritten whole under its name (here or anywhere in the change) is
    changed, not deleted, and a comment or a docstring naming the check does not make it:
    the deleted guard is reported."""
    [message] = _messages("app/files.py", old, new)
    assert "deletes the guard" in message



def test_a_function_deleted_here_and_defined_in_another_file_is_rewritten() -> None:
    """A guarded function deleted whole from one file and defined again in another file of
    the change, without its guard, is moved: the deleted guard is reported."""
    old = ("def load(path):\n    if not is_safe(path):\n        raise Forbidden()\n"
           "    data = open(path).read()\n    return data\n" + OTHER)
    new = "def read(path):\n    return open(path).read()\n" + OTHER
    moved = "def load(path):\n    return open(path, 'rb').read()\n"
    texts = {"app/files.py": new, "app/io.py": moved}
    diff = make_diff("app/files.py", new, old) + make_diff("app/io.py", moved)
    result = run_rules(parse_units(diff), texts.get, Config())
    assert ["deletes the guard" in f.message for f in result.findings
            if f.rule_id == "guard-removed"] == [True]
    # Alone, `read(path)` is `load` under another name: the same removal.
    alone = run_rules(parse_units(make_diff("app/files.py", new, old)), texts.get, Config())
    assert [f.rule_id for f in alone.findings if f.rule_id == "guard-removed"] == [
        "guard-removed"]


def test_a_guarded_function_renamed_without_its_guard_is_reported() -> None:
    """Deleting a guarded function whole and adding it back under another name, without the
    guard, is removing the guard: a new name does not make the removal go away."""
    old = ("def read(path):\n    if not is_safe(path):\n        raise ValueError(path)\n"
           "    return open(path).read()\n")
    new = "def read_any(path):\n    return open(path).read()\n"
    assert "guard-removed" in {f.rule_id for f in findings("app.py", new, old)}
