"""The command line: output contracts, exit codes, and the top-level error handler."""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbot.cli import build_parser, main
from reviewbot.commands import review as review_command
from reviewbot.commands.review import check_flags
from reviewbot.errors import UsageError
from tests.conftest import GitFixture
from tests.report.formats_test import validate_rdjson, validate_sarif

FINDING_KEYS = {"file_path", "start_line", "end_line", "severity", "category", "rule_id",
                "title", "message", "suggestion", "source", "unit_id", "evidence", "in_diff",
                "replacement", "base_line"}


def run_cli(repo: GitFixture, capsys: pytest.CaptureFixture[str],
            *args: str) -> tuple[int, str, str]:
    code = main(["--repo", str(repo.root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_lists_units_and_artifacts(repo: GitFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("app.py", "a = 1\n")
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--mode", "staged", "--offline", "--verbose")
    assert code == 0
    assert "1 unit in 1 file" in out
    assert "app.py L1  add python +1 -0" in out
    run_dir = Path(out.rsplit("artifacts in ", 1)[1].strip())
    assert (run_dir / "step1_diff.json").is_file()
    assert run_dir.parent == repo.root / ".reviewbot" / "runs"


def test_json_output_contract(repo: GitFixture, capsys: pytest.CaptureFixture[str],
                              tmp_path: Path) -> None:
    repo.write("app.py", "a = 1\n")
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--format", "json", "--output-dir", str(tmp_path))
    doc = json.loads(out)
    assert code == 0
    assert set(doc) == {"run_id", "findings", "units", "stats", "description", "path_bytes",
                        "quieted", "quieted_files"}
    assert doc["path_bytes"] == {}  # only names that are not UTF-8 are there
    assert doc["description"] is None  # only a pull request reviewed with a model has one
    assert (tmp_path / doc["run_id"] / "step9_report.json").is_file()
    [unit] = doc["units"]
    assert unit["file_path"] == "app.py" and "hunk" not in unit
    assert doc["stats"]["units"] == 1


def test_finding_fields_match_the_published_names() -> None:
    from reviewbot.schema.findings import Finding
    assert set(Finding.field_names()) == FINDING_KEYS


def test_empty_change_says_nothing_to_review(repo: GitFixture,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit()
    code, out, _ = run_cli(repo, capsys)
    assert code == 0
    assert "nothing to review" in out


def test_usage_errors_exit_2_with_the_fix(repo: GitFixture,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit()
    code, _, err = run_cli(repo, capsys, "--mode", "pr")
    assert code == 2
    assert err.strip() == ("reviewbot: error: --mode pr needs --base REV "
                           "(the branch the change will merge into).")


def test_not_a_repository_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--repo", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "is not inside a git repository" in err


def test_bad_config_exits_2(repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".reviewbot.toml", 'fail_level = "fatal"\n')
    code, _, err = run_cli(repo, capsys)
    assert code == 2
    assert err == (f"reviewbot: error: {repo.root / '.reviewbot.toml'}: fail_level: must "
                   "be 'error', 'warning' or 'info' (got 'fatal').\n")


def test_bad_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--mode", "everything"])
    assert exc.value.code == 2


def test_internal_error_is_one_line_and_a_log(repo: GitFixture, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def explode(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(review_command, "open_repo", explode)
    code, out, err = run_cli(repo, capsys)
    assert code == 3
    assert out == ""
    assert err.startswith("reviewbot: internal error: RuntimeError: boom (traceback in ")
    assert "Traceback" not in err
    log = Path(err.split("traceback in ", 1)[1].split(";", 1)[0])
    assert "RuntimeError: boom" in log.read_text()


def hook_entry() -> list[str]:
    """The arguments of the commit hook as shipped (.pre-commit-hooks.yaml)."""
    import yaml

    hooks = yaml.safe_load((Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text())
    entry = next(hook["entry"] for hook in hooks if hook["id"] == "reviewbot")
    assert entry.split()[0] == "reviewbot"
    return list(entry.split()[1:])


@pytest.mark.parametrize("offline", [False, True])
def test_the_hook_never_imports_model_or_github_sdks(repo: GitFixture, offline: bool) -> None:
    """The hook as shipped (no --offline), with no model configured, must not pay for
    importing openai (~0.8 s), PyGithub, python-gitlab or pydantic (~0.12 s), a repository
    config file included."""
    # All are installed, so only reviewbot's own discipline keeps them out.
    assert importlib.util.find_spec("openai") and importlib.util.find_spec("github")
    assert importlib.util.find_spec("gitlab")
    assert importlib.util.find_spec("pydantic")
    repo.write(".reviewbot.toml", '[limits]\ntimeout_s = 20\n[[path_instructions]]\n'
               'path = "*.py"\ninstructions = "check shell calls"\n')
    # A line some secret detector must look at: detect-secrets' plugins are loaded, not
    # `requests`, nor its package's scanning machinery (`multiprocessing`).
    repo.write("app.py", "import os\nos.system('ls')\ndb_password = 'hunter2hunter2'\n")
    repo.stage()
    argv = ["reviewbot", *hook_entry(), "--repo", str(repo.root), "--format", "json",
            *(["--offline"] if offline else [])]
    probe = (
        "import atexit, sys\n"
        "def heavy():\n"
        "    found = sorted(m for m in sys.modules\n"
        "                   if m.split('.')[0] in ('openai', 'github', 'gitlab', 'httpx2',\n"
        "                                          'pydantic', 'requests', 'multiprocessing'))\n"
        "    print('HEAVY', found, file=sys.stderr)\n"
        "atexit.register(heavy)\n"
        f"sys.argv = {argv!r}\n"
        "from reviewbot.entry import main\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("REVIEWBOT_", "OPENAI_"))}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stderr


def test_version_answers_before_the_review_imports() -> None:
    """`reviewbot --version` prints the version the parser prints, without pydantic."""
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('PYDANTIC', 'pydantic' in sys.modules))\n"
             "sys.argv = ['reviewbot', '--version']\n"
             "from reviewbot.entry import main\n"
             "main()\n")
    fast = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    full = subprocess.run([sys.executable, "-m", "reviewbot", "--version", "--version"],
                          capture_output=True, text=True, check=True)
    assert fast.stdout.splitlines() == [full.stdout.strip(), "PYDANTIC False"]


def test_list_rules_names_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from reviewbot.rules import RULES
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert all(rule_id in out for rule_id in RULES)


def test_closed_pipe_is_not_a_crash() -> None:
    """`reviewbot rules | head -0`: the reader is gone before anything is written."""
    writer = subprocess.Popen([sys.executable, "-m", "reviewbot", "rules"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()  # the interpreter takes far longer to start than this
    stderr = writer.stderr.read().decode()
    assert writer.wait() == 0
    assert "internal error" not in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--mode", "staged", "--base", "main"], "--base is for --mode pr"),
    (["--base", "main"], "it does nothing with --mode staged"),
    (["--mode", "working", "--head", "x"], "--head is for --mode pr"),
    (["--mode", "pr", "--base", "main", "--include-untracked"],
     "--include-untracked is for --mode working"),
    (["--pre-push", "--base", "main"], "--pre-push takes the pushed range from pre-commit"),
    (["--pre-push", "--all-files"], "--pre-push takes the pushed range from pre-commit"),
    (["--mode", "working", "--all-files"], "--all-files is for --mode pr"),
])
def test_flags_that_do_not_fit_the_mode_are_refused(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], args: list[str],
        message: str) -> None:
    repo.commit()
    code, _, err = run_cli(repo, capsys, *args)
    assert code == 2 and message in err


def test_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(f"  {name}" in out for name in ("review", "explain", "rules"))


def test_unwritable_output_dir_names_its_origin_and_the_review_goes_on(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo.root / "blocked").write_text("a file, not a folder\n")
    repo.write(".reviewbot.toml", 'output_dir = "blocked/runs"\n')
    repo.write("app.py", "import os\nos.system('ls ' + input())\n")
    repo.stage()
    code, out, err = run_cli(repo, capsys)
    assert code == 1  # the findings decide, not the artifacts
    assert "python.shell-injection" in out and "artifacts in" not in out
    assert f"(from output_dir in {repo.root / '.reviewbot.toml'})" in err
    assert "change output_dir in" in err and "or pass a writable folder with --output-dir" in err
    assert err.count("goes on without its artifacts") == 1


def test_pr_mode_reads_the_config_at_the_base(repo: GitFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A change cannot switch off the rule that catches it."""
    repo.write("README.md", "# x\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "sneaky")
    repo.write(".reviewbot.toml", '[rules]\n"python.shell-injection" = "off"\n')
    repo.write("run.py", 'import os\nos.system("ls " + path)\n')
    repo.commit("turn the rule off and add a shell call")
    code, out, _ = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--format", "json")
    assert code == 1
    assert [f["rule_id"] for f in json.loads(out)["findings"]] == ["python.shell-injection"]
    # Staged mode reads the work tree's config: the user's own repository.
    repo.write("more.py", 'import os\nos.system("ls " + path)\n')
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--format", "json")
    assert code == 0 and json.loads(out)["findings"] == []


def test_notices_cannot_put_escape_sequences_on_the_terminal(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """A file name is the reviewed repository's: it reaches stderr in notices (here the
    note that a Python file does not parse) with its control characters neutralised."""
    name = "app/evil\x1b[2J\nreviewbot: all checks passed.py"
    repo.write(name, 'print "python 2"\n')
    repo.stage()
    main(["--repo", str(repo.root), "--offline", "--quiet"])
    err = capsys.readouterr().err
    assert "is not Python 3 that parses" in err and "evil" in err
    assert "\x1b" not in err and "\nreviewbot: all checks passed" not in err


def test_quoted_code_and_messages_cannot_drive_the_terminal(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("app/run.py", 'import subprocess\nsubprocess.run(f"ls {p}", shell=True)'
                             '  # \x1b[2J\u202e gnp.exe\n')
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--offline", "--format", "text")
    assert code == 1 and "python.shell-injection" in out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[2J\\u202e gnp.exe" in out  # shown, as escapes


@pytest.mark.parametrize("mode", ["staged", "working", "pr"])
def test_a_file_name_that_is_not_utf8_is_still_checked(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    repo.write("README.md", "# x\n")
    base = repo.commit()
    name = "bad\xff.py".encode("latin-1")  # the byte 0xff alone is not UTF-8
    (repo.root / os.fsdecode(name)).write_bytes(b"import os\nos.system('ls ' + input())\n")
    if mode == "pr":
        repo.commit()
    elif mode == "staged":
        repo.stage()
    else:
        repo.git("add", "-N", os.fsdecode(name))
    args = {"staged": [], "working": ["--mode", "working"],
            "pr": ["--mode", "pr", "--base", base]}[mode]
    code, out, _ = run_cli(repo, capsys, "--format", "json", *args)
    findings = json.loads(out)["findings"]
    assert code == 1
    assert [(f["file_path"], f["rule_id"]) for f in findings] == [
        ("bad\ufffd.py", "python.shell-injection")]


def test_reports_name_a_file_that_is_not_utf8_by_its_bytes(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A report names the real file: SARIF percent-encodes the name's own bytes, JSON
    carries them (base64) beside the shown name."""
    repo.write("README.md", "# x\n")
    repo.commit()
    (repo.root / os.fsdecode(b"bad\xff\xfename.py")).write_bytes(
        b"import os\nos.system('ls ' + input())\n")
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--format", "sarif")
    doc = json.loads(out)
    validate_sarif(doc)
    uris = [result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in doc["runs"][0]["results"]]
    assert code == 1 and uris == ["bad%FF%FEname.py"]
    code, out, _ = run_cli(repo, capsys, "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert [(f["file_path"], base64.b64decode(report["path_bytes"][f["file_path"]]))
            for f in report["findings"]] == [("bad\ufffd\ufffdname.py", b"bad\xff\xfename.py")]
    code, out, _ = run_cli(repo, capsys, "--format", "rdjson")
    validate_rdjson(out, tmp_path)


def test_files_the_config_ignores_are_still_checked_for_secrets(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".reviewbot.toml", 'ignore = ["deploy/*"]\n')
    repo.commit()
    repo.write("deploy/settings.py", 'AWS_KEY = "AKIAZ7Q2MXC5LFPN3WKB"\nimport os\n'
                                     "os.system('ls ' + input())\n")
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert [f["rule_id"] for f in report["findings"]] == ["secrets.hardcoded"]
    assert report["units"] == [] and report["stats"]["ignored_units"] == 1
    repo.write("deploy/settings.py", "import os\nos.system('ls ' + input())\n")
    repo.stage()
    code, out, _ = run_cli(repo, capsys)
    assert code == 0
    assert "the config's `ignore` names every changed file (1 unit" in out
    assert "the change is empty" not in out


@pytest.mark.parametrize(("command", "usage"), [
    ("review", "usage: reviewbot [review] "), ("explain", "usage: reviewbot explain "),
    ("rerun", "usage: reviewbot rerun "), ("cache", "usage: reviewbot cache ")])
def test_each_commands_usage_line_reads_as_typed(capsys: pytest.CaptureFixture[str],
                                                 command: str, usage: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert capsys.readouterr().out.startswith(usage)


def test_an_empty_change_is_answered_before_the_pipeline_is_imported(repo: GitFixture) -> None:
    """The commonest review: nothing staged. It needs no records, config parser or rules."""
    repo.write("app.py", "x = 1\n")
    repo.commit()
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('LOADED', sorted(m for m in sys.modules if m in "
             "('msgspec', 'reviewbot.run.pipeline', 'reviewbot.rules', 'detect_secrets'))))\n"
             f"sys.argv = ['reviewbot', *{hook_entry()!r}, '--repo', {str(repo.root)!r}]\n"
             "from reviewbot.entry import main\n"
             "main()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "OPENAI_"))}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["reviewbot: nothing to review (the change is empty).",
                                          "LOADED []"]


SHELL_CALL = 'import os\nos.system("ls " + path)\n'
RULE_OFF = '[rules]\n"python.shell-injection" = "off"\n'


def sneaky_branch(repo: GitFixture, files: dict[str, str]) -> None:
    """A branch off the base that adds a shell call and writes `files`."""
    repo.git("checkout", "-q", "-b", "sneaky")
    for path, text in files.items():
        target = repo.root / path
        if target.is_symlink():
            target.unlink()
        repo.write(path, text)
    repo.write("run.py", SHELL_CALL)
    repo.commit("loosen the review and add a shell call")


def found(out: str) -> list[str]:
    return [f["rule_id"] for f in json.loads(out)["findings"]]


@pytest.mark.parametrize("written", ["relative", "absolute"])
def test_a_change_cannot_rewrite_the_config_file_it_is_reviewed_with(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], written: str) -> None:
    """`--config FILE` in the repository is read at the base, as .reviewbot.toml is: a change
    that rewrites that file cannot switch off the rule that catches it."""
    repo.write("cfg/rb.toml", 'fail_level = "error"\n')
    base = repo.commit("base")
    sneaky_branch(repo, {"cfg/rb.toml": RULE_OFF})
    given = "cfg/rb.toml" if written == "relative" else str(repo.root / "cfg" / "rb.toml")
    code, out, _ = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--config", given,
                           "--format", "json")
    assert (code, found(out)) == (1, ["python.shell-injection"])
    # Staged mode reads it from disk, as it reads .reviewbot.toml: the committer's own tree.
    repo.write("more.py", SHELL_CALL)
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--config", given, "--format", "json")
    assert (code, found(out)) == (0, [])


def test_a_config_file_the_base_lacks_is_an_error_that_says_what_to_do(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A change cannot bring the `--config` file it is reviewed with; the user's own file
    outside the repository is read from disk."""
    repo.write("README.md", "# x\n")
    base = repo.commit("base")
    sneaky_branch(repo, {"cfg/rb.toml": RULE_OFF})
    code, out, err = run_cli(repo, capsys, "--mode", "pr", "--base", base,
                             "--config", "cfg/rb.toml")
    assert code == 2 and out == ""
    assert err == (f"reviewbot: error: cfg/rb.toml (given with --config) is not in {base} "
                   "(the base): commit it to the base branch first, or pass an absolute path "
                   "to a file outside the repository.\n")
    own = tmp_path / "mine.toml"
    own.write_text(RULE_OFF)
    code, out, _ = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--config", str(own),
                           "--format", "json")
    assert (code, found(out)) == (0, [])


def test_a_config_symlink_is_followed_in_the_base_tree_never_on_disk(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """A change that points the `--config` symlink at its own file is not read: the link
    is resolved in the base commit's tree."""
    repo.write("policy/strict.toml", 'fail_level = "error"\n')
    (repo.root / "cfg").mkdir()
    (repo.root / "cfg" / "rb.toml").symlink_to("../policy/strict.toml")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "sneaky")
    repo.write("policy/loose.toml", RULE_OFF)
    (repo.root / "cfg" / "rb.toml").unlink()
    (repo.root / "cfg" / "rb.toml").symlink_to("../policy/loose.toml")
    repo.write("run.py", SHELL_CALL)
    repo.commit("point the config at a loose one")
    code, out, _ = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--config",
                           "cfg/rb.toml", "--format", "json")
    assert (code, found(out)) == (1, ["python.shell-injection"])


def test_a_config_symlink_out_of_the_base_tree_is_refused(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `--config` symlink in the repository is never followed out of it to disk."""
    loose = tmp_path / "loose.toml"
    loose.write_text(RULE_OFF)
    (repo.root / "rb.toml").symlink_to(loose)
    base = repo.commit("base")
    sneaky_branch(repo, {})
    code, _, err = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--config", "rb.toml")
    assert code == 2
    assert f"rb.toml at {base} (the base) is a symlink out of the repository" in err


def test_a_missing_user_config_file_is_an_error(
        repo: GitFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """REVIEWBOT_CONFIG naming no file is said, as --config naming none is: a typo never
    drops the user's settings in silence."""
    missing = tmp_path / "nonexistent.toml"
    monkeypatch.setenv("REVIEWBOT_CONFIG", str(missing))
    repo.commit()
    code, _, err = run_cli(repo, capsys)
    assert code == 2
    assert err == (f"reviewbot: error: {missing} (given with REVIEWBOT_CONFIG) is not a file; "
                   "fix the path, or unset REVIEWBOT_CONFIG to use "
                   "~/.config/reviewbot/config.toml.\n")


def git_is_intact(repo: GitFixture) -> None:
    result = subprocess.run(["git", "branch", "--list"], cwd=repo.root, capture_output=True,
                            text=True, check=True)
    assert result.stderr == "" and result.stdout.split() == ["*", "main"]
    assert sorted(p.name for p in (repo.root / ".git" / "refs" / "heads").iterdir()) == ["main"]
    assert not list((repo.root / ".git").rglob("*reviewbot*"))
    assert not list((repo.root / ".git").rglob(".gitignore"))


@pytest.mark.parametrize("folder", [".git/refs/heads", ".git/hooks", "./.git/../.git/x",
                                    "sub/.git/x"])
def test_the_repository_config_cannot_put_run_folders_in_git(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], folder: str) -> None:
    """A repository's output_dir is never inside a .git folder: run folders among the refs
    would break every later git command."""
    repo.write(".reviewbot.toml", f'output_dir = "{folder}"\n')
    repo.commit()
    repo.write("app.py", SHELL_CALL)
    repo.stage()
    code, _, err = run_cli(repo, capsys)
    assert code == 2
    assert err == (f"reviewbot: error: {repo.root / '.reviewbot.toml'}: output_dir {folder!r} "
                   "is inside a .git folder, among git's own files; choose another folder "
                   "(the default is .reviewbot/runs).\n")
    git_is_intact(repo)


@pytest.mark.parametrize("how", ["output_dir", "the default folder"])
def test_a_committed_symlink_cannot_lead_run_folders_into_git(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], how: str) -> None:
    """A symlink in the reviewed tree that leads the output folder into .git gets nothing
    written there, and the review still decides the exit code."""
    if how == "output_dir":
        (repo.root / "gitlink").symlink_to(".git")
        repo.write(".reviewbot.toml", 'output_dir = "gitlink/refs/heads"\n')
    else:
        (repo.root / ".reviewbot").symlink_to(".git/refs/heads")
    repo.commit()
    repo.write("app.py", SHELL_CALL)
    repo.stage()
    code, out, err = run_cli(repo, capsys)
    assert code == 1 and "python.shell-injection" in out and "artifacts in" not in out
    assert "leads into the git directory" in err and "nothing is written there" in err
    git_is_intact(repo)


def store_and_worktree(repo: GitFixture, tmp_path: Path) -> tuple[GitFixture, Path]:
    """A repository whose git directory is elsewhere (`--separate-git-dir`), and a linked
    worktree of it: neither git directory has `.git` in its path."""
    store = tmp_path / "store"
    repo.git("init", "-q", "--template=", f"--separate-git-dir={store}", ".")
    repo.write("a.py", "a = 1\n")
    repo.commit()
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", str(worktree))
    return GitFixture(worktree), store


@pytest.mark.parametrize("where", [".git/refs/heads", ".git/../.git/x", "alias/refs/heads",
                                   "store/refs/heads", "store/worktrees/wt/x"])
def test_the_output_dir_flag_cannot_name_a_git_directory(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        where: str) -> None:
    """--output-dir is the user's, but run folders in a git directory (this repository's
    .git, a symlink to it, a separate git directory, a worktree's) break the repository:
    refused, with what to do."""
    worktree, store = store_and_worktree(repo, tmp_path)
    (tmp_path / "alias").symlink_to(store)
    target = (repo.root if where.startswith(".git") else tmp_path) / where
    worktree.write("b.py", SHELL_CALL)
    worktree.stage()
    before = sorted(store.rglob("*"))
    code, out, err = run_cli(worktree, capsys, "--output-dir", str(target))
    assert code == 2 and out == ""
    assert err.startswith(f"reviewbot: error: --output-dir {target} ")
    assert "pass a folder outside it" in err
    assert sorted(store.rglob("*")) == before


def test_cache_clear_never_deletes_outside_the_cache(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A committed `.reviewbot/cache` symlink cannot make `reviewbot cache --clear` delete
    a branch (a loose ref named like a cache entry) or files out of the repository."""
    repo.commit()
    repo.git("branch", "keep/entry.json")
    (repo.root / ".reviewbot").mkdir()
    (repo.root / ".reviewbot" / "cache").symlink_to("../.git/refs/heads")
    assert main(["cache", "--repo", str(repo.root), "--clear"]) == 2
    assert "leads into the git directory" in capsys.readouterr().err
    assert "keep/entry.json" in repo.git("branch", "--list")
    outside = tmp_path / "outside"
    (outside / "x").mkdir(parents=True)
    (outside / "x" / "mine.json").write_text("{}")
    (repo.root / ".reviewbot" / "cache").unlink()
    (repo.root / ".reviewbot" / "cache").symlink_to(outside)
    assert main(["cache", "--repo", str(repo.root), "--clear"]) == 2
    assert "leads out of the repository" in capsys.readouterr().err
    assert (outside / "x" / "mine.json").is_file()


def test_a_crash_log_never_lands_in_git(repo: GitFixture, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The traceback of an internal error is not written where a committed symlink leads the
    default output folder (into .git, where it would read as a broken ref)."""
    def explode(*args: object) -> None:
        raise RuntimeError("boom")

    repo.commit()
    (repo.root / ".reviewbot").symlink_to(".git/refs/heads")
    monkeypatch.setattr(review_command, "open_repo", explode)
    code, _, err = run_cli(repo, capsys)
    assert code == 3
    log = Path(err.split("traceback in ", 1)[1].split(";", 1)[0])
    assert "RuntimeError: boom" in log.read_text() and not log.is_relative_to(repo.root)
    git_is_intact(repo)


def test_quiet_and_verbose_together_are_a_usage_error(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """`-q -v` is a contradiction: exit 2, naming both, not one of them chosen in silence."""
    with pytest.raises(SystemExit) as exc:
        main(["--repo", str(repo.root), "-q", "-v"])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_pushed_range_that_is_not_here_is_said_in_pre_commits_words(
        repo: GitFixture, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--pre-push` takes its range from pre-commit: a start that is no commit here names
    PRE_COMMIT_FROM_REF, never `--base`, which nobody passed."""
    head = repo.commit()
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "0" * 40)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    code, _, err = run_cli(repo, capsys, "--pre-push")
    assert code == 2
    assert f"PRE_COMMIT_FROM_REF={'0' * 40} (the pushed range" in err
    assert "--base" not in err


def test_a_revision_past_the_first_commit_is_not_sent_to_a_fetch(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """A revision that counts back past the first commit of a full history cannot be
    fetched: the error says how long the history is, never `git fetch`."""
    for number in (1, 2, 3):
        repo.write("a.py", f"a = {number}\n")
        repo.commit(f"c{number}")
    repo.git("remote", "add", "origin", str(repo.root))
    for flag in ("--base", "--head"):
        given = ["--base", "HEAD~1", flag, "HEAD~1000"] if flag == "--head" else [
            flag, "HEAD~1000"]
        code, _, err = run_cli(repo, capsys, "--mode", "pr", "--offline", *given)
        assert code == 2
        assert f"{flag} HEAD~1000 is not a commit in this repository" in err
        assert "HEAD's history has 3 commits (HEAD~2 is the first)" in err
        assert "git fetch" not in err


def test_a_shallow_clone_is_told_to_fetch_the_history(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In a shallow clone the older commits exist upstream: the error says how to fetch
    them."""
    for number in (1, 2, 3):
        repo.write("a.py", f"a = {number}\n")
        repo.commit(f"c{number}")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--", f"file://{repo.root}", str(clone)],
                   check=True, capture_output=True)
    code = main(["--repo", str(clone), "--mode", "pr", "--base", "HEAD~2", "--offline"])
    err = capsys.readouterr().err
    assert code == 2
    assert "this shallow clone holds 1 commit of HEAD's history" in err
    assert "`git fetch --unshallow`" in err


def test_a_name_that_is_not_here_is_fetched_only_from_a_remote(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """A fetch is suggested only when there is a remote to fetch from."""
    repo.commit()
    code, _, err = run_cli(repo, capsys, "--mode", "pr", "--base", "origin/main")
    assert code == 2
    assert "has no remote to fetch it from" in err and "git fetch" not in err
    repo.git("remote", "add", "origin", str(repo.root))
    code, _, err = run_cli(repo, capsys, "--mode", "pr", "--base", "origin/main")
    assert code == 2
    assert "Fetch it first (`git fetch origin main`;" in err


@pytest.mark.parametrize("edit", ["modified", "untracked", "pyproject"])
def test_an_uncommitted_config_edit_is_said_to_be_unused_in_pr_mode(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], edit: str) -> None:
    """A pr review reads the repository's config at the base: a config edit in the work
    tree is said not to count, with the config that does, never ignored in silence."""
    repo.write("pyproject.toml", "[tool.black]\nline-length = 99\n")
    if edit == "modified":
        repo.write(".reviewbot.toml", 'fail_level = "error"\n')
    base = repo.commit("base")
    repo.write("run.py", SHELL_CALL)
    repo.commit("a shell call")
    if edit == "pyproject":
        repo.write("pyproject.toml", f"{RULE_OFF.replace('[rules]', '[tool.reviewbot.rules]')}")
    else:
        repo.write(".reviewbot.toml", RULE_OFF)
    code, out, err = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--format", "json")
    assert (code, found(out)) == (1, ["python.shell-injection"])
    name = "pyproject.toml" if edit == "pyproject" else ".reviewbot.toml"
    used = (f".reviewbot.toml at {base} (the base)" if edit == "modified"
            else f"no repository config at {base}")
    assert err == (f"reviewbot: {name} has uncommitted changes, which this review does not "
                   "use: --mode pr reads the repository's config at the base, so that a change "
                   f"cannot loosen its own review (config used: {used})\n")
    # The staged and working reviews read the work tree's file: no notice there.
    code, _, err = run_cli(repo, capsys, "--mode", "working", "--format", "json")
    assert code == 0 and err == ""


def test_an_unrelated_pyproject_edit_gets_no_config_notice(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """Only reviewbot's own table counts as config in pyproject.toml."""
    repo.write("pyproject.toml", '[tool.reviewbot]\nfail_level = "error"\n')
    base = repo.commit("base")
    repo.write("a.py", "a = 1\n")
    repo.commit()
    repo.write("pyproject.toml", '[tool.reviewbot]\nfail_level = "error"\n[tool.black]\n')
    code, _, err = run_cli(repo, capsys, "--mode", "pr", "--base", base, "--format", "json")
    assert code == 0 and err == ""


def test_an_empty_working_review_names_the_untracked_files_it_left_out(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """A new file is untracked until it is added: `--mode working` with only a new file
    holding a key says the file is there and how to review it, and then finds the key."""
    repo.write("README.md", "# x\n")
    repo.commit()
    repo.write("new.py", 'KEY = "AKIAZ7Q2MXC5LFPN3WKB"\n')
    code, out, _ = run_cli(repo, capsys, "--mode", "working", "--offline")
    assert code == 0
    assert "the change is empty" not in out
    assert "1 untracked file not reviewed: `--include-untracked` reviews them" in out
    code, out, _ = run_cli(repo, capsys, "--mode", "working", "--offline",
                           "--include-untracked")
    assert code == 1 and "secrets.hardcoded" in out
    (repo.root / "new.py").unlink()
    code, out, _ = run_cli(repo, capsys, "--mode", "working", "--offline")
    assert "nothing to review (the change is empty)" in out


def test_a_key_in_a_test_file_stops_the_commit_and_a_documented_example_does_not(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """`reviewbot rules`, docs/RULES.md and the hook say one thing: a known token format in
    test code is an error (a real key in a test file is leaked all the same); AWS's
    documented example key is no secret anywhere."""
    repo.write("tests/test_x.py", "def test_x():\n    pass\n")
    repo.commit()
    repo.write("tests/test_k.py", 'KEY = "AKIAZ7Q2MXC5LFPN3WKB"\n')
    repo.stage()
    code, out, _ = run_cli(repo, capsys, "--offline", "--quiet")
    assert code == 1 and "error   Hard-coded secret: AWS access key ID" in out
    repo.write("tests/test_k.py", 'KEY = "AKIAIOSFODNN7EXAMPLE"\n')
    repo.stage()
    assert run_cli(repo, capsys, "--offline", "--quiet")[:2] == (0, "")
    assert main(["rules"]) == 0
    rules = capsys.readouterr().out
    footer = " ".join(rules.split("\n\n")[-1].split())
    assert "In test code every rule reports one level lower, except a known token format" \
        in footer
    documented = " ".join((Path(__file__).parents[1] / "docs" / "RULES.md").read_text(
        encoding="utf-8").split())
    assert "In test code every rule reports one level lower, except a known token format" \
        in documented


def test_the_push_summary_counts_the_files_its_findings_are_in(
        repo: GitFixture, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pushed commits: keys added to three files, then taken out of two. The change is
    one unit of one file, and the summary says where the other findings are (the pushed
    history), never "in 1 unit of 1 file" alone under findings listed in three files; and
    `explain` counts in words too ("1 unit in 1 file")."""
    repo.write("README.md", "# x\n")
    base = repo.commit()
    for name in ("a.py", "b.py", "c.py"):
        repo.write(name, f'KEY_{name[0].upper()} = "AKIAZ7Q2MXC5LFPN3WK{name[0].upper()}"\n')
    repo.commit("keys")
    for name in ("b.py", "c.py"):
        (repo.root / name).unlink()
    head = repo.commit("two keys out")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    code, out, _ = run_cli(repo, capsys, "--pre-push", "--offline")
    assert code == 1
    assert {"a.py", "b.py", "c.py"} <= set(out.splitlines())
    summary = next(line for line in out.splitlines() if line.startswith("findings:"))
    assert "in 1 unit of 1 file, and 2 more files of the pushed history (" in summary
    assert main(["explain", str(repo.root / ".reviewbot" / "runs" / sorted(
        p.name for p in (repo.root / ".reviewbot" / "runs").iterdir() if p.is_dir())[-1])]) == 0
    assert "coverage: 1 unit in 1 file reviewed" in capsys.readouterr().out


def review_help_groups() -> dict[str, set[str]]:
    """`reviewbot review --help`'s groups: title -> the flags listed under it."""
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {group.title or "": {flag for action in group._group_actions
                                for flag in action.option_strings}
            for group in commands.choices["review"]._action_groups}


@pytest.mark.parametrize("mode", ["github", "gitlab"])
def test_a_flag_the_help_lists_for_a_mode_is_one_that_mode_takes(mode: str) -> None:
    """`--help` lists under "github and gitlab modes" only flags both take, and under each
    forge's own group the flags only it takes (gitlab refuses --reporter and --sarif)."""
    groups = review_help_groups()
    listed = groups["github and gitlab modes"] | groups[f"{mode} mode"]
    other = groups[f"{'gitlab' if mode == 'github' else 'github'} mode"]
    assert listed and other and not listed & other
    parser = build_parser()
    for flag in sorted(listed | other):
        value = {"--reporter": ["summary"], "--max-comments": ["3"],
                 "--inline-level": ["info"], "--sarif": ["x"], "--codequality": ["x"]}
        args = parser.parse_args(["review", "--mode", mode, flag, *value.get(flag, [])])
        if flag in listed:
            check_flags(args)
        else:
            with pytest.raises(UsageError):
                check_flags(args)


def test_every_environment_variable_for_the_endpoint_is_named_where_users_look() -> None:
    """The endpoint's variables config.py reads are the ones `--help` names, and the Action
    sets the one the README and the GitLab component set (OPENAI_BASE_URL)."""
    import inspect

    from reviewbot import config

    read = set(re.findall(r'"((?:REVIEWBOT|OPENAI)_BASE_URL)"',
                          inspect.getsource(config.apply_environment)))
    assert read == {"REVIEWBOT_BASE_URL", "OPENAI_BASE_URL"}
    shown = build_parser().format_help() + " ".join(
        a.help or "" for p in review_help_parsers() for a in p._actions)
    assert read <= set(re.findall(r"[A-Z_]+_BASE_URL", shown))
    action = (Path(__file__).parents[1] / "action.yml").read_text(encoding="utf-8")
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"export ([A-Z_]+_BASE_URL)", action)) == {"OPENAI_BASE_URL"}
    assert "OPENAI_BASE_URL" in readme


def review_help_parsers() -> list[argparse.ArgumentParser]:
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [commands.choices["review"]]
