"""reviewbot's own patterns against shellcheck, hadolint and zizmor on the same real files.

Each file is reviewed as a new file (every line added), once with the external tools
switched off (our patterns only) and once with them on; the table counts findings at
warning or above, and the files where each side finds something. The files are whatever
shell scripts, Dockerfiles and GitHub workflows are under the roots given: by default the
machine's pyenv checkout and Cloud SDK install, real files nobody here wrote.

    python bench/scanners.py [--root DIR ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewbot.config import Config, RuleSetting
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules, scanners

DEFAULT_ROOTS = (Path.home() / ".pyenv", Path("/usr/lib/google-cloud-sdk"))
TOOLS = {rule.id for rule in scanners.RULES}
MAX_FILES = 150


@dataclass
class Tally:
    files: int = 0
    ours: Counter[str] = field(default_factory=Counter)
    tool: Counter[str] = field(default_factory=Counter)
    ours_files: int = 0
    tool_files: int = 0
    seconds: float = 0.0
    codes: Counter[str] = field(default_factory=Counter)


def kind_of(path: Path) -> str | None:
    if ".github/workflows/" in path.as_posix() and path.suffix in (".yml", ".yaml"):
        return "workflow"
    if path.name.lower().startswith("dockerfile"):
        return "dockerfile"
    if path.suffix in (".sh", ".bash"):
        return "shell"
    return None


def new_file_diff(path: str, text: str) -> bytes:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}").encode()


def relative_name(path: Path, kind: str) -> str:
    """A path reviewbot recognises the kind from (workflows live under .github/workflows)."""
    if kind == "workflow":
        return f".github/workflows/{path.name}"
    if kind == "dockerfile":
        return "Dockerfile"
    return f"scripts/{path.name}"


# Our patterns alone: the tools switched off the way a user would, in the rules' settings.
WITHOUT_TOOLS = Config(rules={tool: RuleSetting(enabled=False) for tool in TOOLS})


def review(name: str, text: str, with_tools: bool) -> list[tuple[str, str, str]]:
    units = parse_units(new_file_diff(name, text))
    result = run_rules(units, lambda p: text if p == name else None,
                       Config() if with_tools else WITHOUT_TOOLS)
    return [(f.rule_id, f.severity, f.title) for f in result.findings]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, action="append", help="folder to take files from")
    args = parser.parse_args()
    roots = [r for r in (args.root or DEFAULT_ROOTS) if r.is_dir()]
    missing = [rule.executable for rule in scanners.RULES
               if scanners.find_executable(rule.executable) is None]
    if missing:
        raise SystemExit(f"install the tools first ({scanners.INSTALL_HINT}): {missing}")
    tallies: dict[str, Tally] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            kind = kind_of(path)
            if kind is None or not path.is_file() or path.is_symlink():
                continue
            tally = tallies.setdefault(kind, Tally())
            if tally.files >= MAX_FILES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            name = relative_name(path, kind)
            ours = [f for f in review(name, text, with_tools=False) if f[1] != "info"]
            started = time.perf_counter()
            both = [f for f in review(name, text, with_tools=True) if f[1] != "info"]
            tally.seconds += time.perf_counter() - started
            tool = [f for f in both if f[0] in TOOLS]
            tally.files += 1
            tally.ours.update(severity for _, severity, _ in ours)
            tally.tool.update(severity for _, severity, _ in tool)
            tally.ours_files += bool(ours)
            tally.tool_files += bool(tool)
            tally.codes.update(title.split()[-1] for _, _, title in tool)
    print(f"roots: {', '.join(str(r) for r in roots)}")
    print("| files | count | our patterns: error / warning (files) | tool: error / warning "
          "(files) | tool time per file |")
    print("| --- | ---: | ---: | ---: | ---: |")
    tool_names = {"shell": "shellcheck", "dockerfile": "hadolint", "workflow": "zizmor"}
    for kind, t in sorted(tallies.items()):
        print(f"| {kind} ({tool_names[kind]}) | {t.files} | {t.ours['error']} / "
              f"{t.ours['warning']} ({t.ours_files}) | {t.tool['error']} / {t.tool['warning']} "
              f"({t.tool_files}) | {1000 * t.seconds / max(t.files, 1):.0f} ms |")
    for kind, t in sorted(tallies.items()):
        print(f"{tool_names[kind]} codes: "
              + ", ".join(f"{code} {n}" for code, n in t.codes.most_common(8)))


if __name__ == "__main__":
    main()
