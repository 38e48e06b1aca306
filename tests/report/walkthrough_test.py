"""The walkthrough that opens `--format markdown` and the pull request's summary comment."""

from __future__ import annotations

from reviewbot.code.languages import detect_language
from reviewbot.report import ReportInput
from reviewbot.report.walkthrough import MAX_FILES, MAX_FOLDERS, MAX_PLACES, walkthrough
from reviewbot.schema.findings import Finding
from reviewbot.schema.records import Tag
from reviewbot.schema.runs import ModelStats, RunReport, RunStats
from reviewbot.schema.units import IndexUnit, LineNumbers, Metrics


def unit(path: str, *tags: Tag, added: int = 1, removed: int = 0, kind: str = "modify",
         why: str = "subprocess") -> IndexUnit:
    notes = (f"security_sensitive: {why}",) if "security_sensitive" in tags else ()
    return IndexUnit(unit_id=f"u-{path}", file_path=path, patch_type=kind,  # type: ignore[arg-type]
                     language=detect_language(path), tags=tags, rule_notes=notes,
                     metrics=Metrics(added_lines=added, removed_lines=removed),
                     line_numbers=LineNumbers(new_compact="L3-L9"))


def finding(path: str, severity: str = "error") -> Finding:
    return Finding(file_path=path, start_line=3, end_line=3, severity=severity,  # type: ignore[arg-type]
                   category="security", rule_id="python.shell-injection", title="t",
                   message="m")


def lines_of(units: list[IndexUnit], findings: tuple[Finding, ...] = (),
             **stats: object) -> list[str]:
    report = RunReport(run_id="r", units=tuple(units), findings=findings,
                       stats=RunStats(units=len(units), **stats))  # type: ignore[arg-type]
    return walkthrough(ReportInput(report=report))


def test_one_row_per_file_with_what_matters_about_it() -> None:
    lines = lines_of([unit("app/run.py", "security_sensitive", added=5, kind="add"),
                      unit("app/run.py", "security_sensitive", added=2),
                      unit(".github/workflows/ci.yml", "ci_workflow", "config_file"),
                      unit("docs/guide.md", "docs", "only_docs", added=3, removed=1)],
                     (finding("app/run.py"), finding("app/run.py", "info")))
    assert lines[:4] == ["### What this change does", "", "| file | change | lines | notes |",
                         "| --- | --- | ---: | --- |"]
    assert "| `app/run.py` | added | +7 -0 | security-sensitive, 1 error, 1 info |" in lines
    assert "| `docs/guide.md` | modified | +3 -1 | docs |" in lines
    look = next(line for line in lines if line.startswith("**Where to look:**"))
    assert look == ("**Where to look:** `app/run.py` (1 error, 1 info); CI workflows (they run "
                    "with the repository's secrets): `.github/workflows/ci.yml`.")
    assert lines[-1] == ("**How it was reviewed:** the rules read all 4 units; no model "
                         "(offline).")


def test_a_large_change_names_the_files_that_matter_and_counts_the_rest() -> None:
    risky = [unit(f"api/r{n}.py", "security_sensitive") for n in range(3)]
    plain = [unit(f"pkg{n % 30:02d}/m{n}.py", added=2) for n in range(200)]
    lines = lines_of(plain + risky, (finding("pkg00/m0.py"),))
    rows = [line for line in lines if line.startswith("| `") or line.startswith("| else")]
    named = [line for line in rows if "more files" not in line]
    assert len(named) == MAX_FILES
    assert "| `api/r0.py` | modified | +1 -0 | security-sensitive |" in named
    assert any(line.startswith("| `pkg00/m0.py` |") and "1 error" in line for line in named)
    folders = [line for line in rows if "more files" in line]
    assert len(folders) == MAX_FOLDERS + 1 and folders[-1].startswith("| elsewhere |")
    counted = sum(int(line.split("|")[2].split()[0]) for line in folders)
    assert counted + len(named) == 203


def test_how_it_was_reviewed_with_a_model_and_ignored_files() -> None:
    model = ModelStats(mode="tools", reviewed_units=1, skipped_units={"call_cap": 1}, calls=3)
    lines = lines_of([unit("a.py"), unit("b.py")], ignored_units=1, model=model)
    assert lines[-1].startswith(
        "**How it was reviewed:** the rules read all 2 units (1 in files the configuration "
        "ignores, for secrets only); the model (tools): 1 of 2 units reviewed")


def test_nothing_changed_nothing_said() -> None:
    assert lines_of([]) == []


def test_the_models_words_come_inert_and_marked_as_the_models() -> None:
    from reviewbot.schema.runs import ChangeDescription

    report = RunReport(run_id="r", units=(unit("app/a.py"), unit("app/b.py")),
                       stats=RunStats(units=2), description=ChangeDescription(
                           overview="Adds a retry | loop\nfor @team <!-- reviewbot:fp=1 -->",
                           files={"app/a.py": "retries the upload"}))
    lines = walkthrough(ReportInput(report=report))
    assert lines[2] == ("Adds a retry \\| loop for `@team` &lt;!-- reviewbot:fp=1 --> "
                        "_(the review model's summary)_")
    assert "| file | change | lines | notes | what changes |" in lines
    assert "| `app/a.py` | modified | +1 -0 |  | retries the upload |" in lines
    assert "| `app/b.py` | modified | +1 -0 |  |  |" in lines


def test_a_file_name_stays_in_its_cell_and_its_code_span() -> None:
    """A pipe in a file name (a named file or a folder) cannot end the table's cell: what
    follows it stays code, so it mentions no one."""
    named = lines_of([unit("docs/a|@octocat @octo-org/admins|b.py")])
    assert "| `docs/a\\|@octocat @octo-org/admins\\|b.py` | modified | +1 -0 |  |" in named
    many = [unit(f"x|@team{n}/f{n}.py") for n in range(MAX_FILES + 1)]
    assert any(row.startswith("| `x\\|@team") and "and below" in row for row in lines_of(many))


def test_a_files_label_holds_for_every_unit_of_it() -> None:
    """A file is "whitespace only" or "imports only" when all its units are: one unit of
    blank lines does not hide a version bump, one import does not hide a hundred lines."""
    lines = lines_of([unit("pyproject.toml", "only_whitespace", added=0, removed=2),
                      unit("pyproject.toml", "dependency_manifest", added=2, removed=2),
                      unit("src/linegen.py", "only_imports"),
                      unit("src/linegen.py", added=122, removed=14),
                      unit("src/api.py", "only_imports"), unit("src/api.py", "only_imports")])
    assert "| `pyproject.toml` | modified | +2 -4 | dependencies |" in lines
    assert "| `src/linegen.py` | modified | +123 -14 |  |" in lines
    assert "| `src/api.py` | modified | +2 -0 | imports only |" in lines


def test_one_more_file_is_one_file() -> None:
    many = [unit(f"pkg/m{n:02d}.py") for n in range(MAX_FILES)] + [unit("zz/one.py")]
    assert "| `zz/` and below | 1 more file | +1 -0 | |" in lines_of(many)


def test_where_to_look_is_a_few_places_found_in_code_best_first() -> None:
    """"Where to look" names at most MAX_PLACES places: files with findings, the most severe
    first, then code the rules found security sensitive, the most reasons first; a security
    word in prose or data (a workflow's `token`, a Vim script's help text) names no place."""
    units = [unit(f"src/m{n}.py", "security_sensitive", why="sql") for n in range(6)]
    units += [unit("src/auth.py", "security_sensitive", why="path, auth, crypto"),
              unit("plugin/black.vim", "security_sensitive", why="sql"),
              unit("docs/conf.yaml", "security_sensitive", "config_file", why="secrets"),
              unit("tests/test_a.py"), unit("app/run.py")]
    lines = lines_of(units, (finding("tests/test_a.py", "info"), finding("app/run.py")))
    look = next(line for line in lines if line.startswith("**Where to look:**"))
    places = look.removeprefix("**Where to look:** ").removesuffix(".").split("; ")
    assert places[:3] == ["`app/run.py` (1 error)", "`tests/test_a.py` (1 info)",
                          "`src/auth.py` L3-L9 (security-sensitive: path, auth, crypto)"]
    assert len(places) == MAX_PLACES + 1 and places[-1] == "and 4 more"
    assert "black.vim" not in look and "conf.yaml" not in look
