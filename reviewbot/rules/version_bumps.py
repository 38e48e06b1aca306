"""Whether a manifest's edit is a dependency bump (the `only_versions` tag).

A unit so tagged is not sent for review and its package names are no security words
(rules/tagging.py, plan/planner.py), so only what is a version may pass for one. A number
is one where the manifest's format writes a version: after a comparison (`flask==3.0.3`,
`"react": "^18.3.1"`), after `@` (`pkg@1.0`, a git URL's `@v1.0`), as a version key's
value (`version = "1.0"`, `<version>3.1.0</version>`), as a package's quoted value
(`serde = "1.0"`), a conda pin (`- python=3.11`), go.mod's `v1.2.3` and `go 1.21`. A
number elsewhere is what it is: a host or a path in a URL (`https://10.0.0.1/simple`,
`-e ./1`), a port, a script's argument (`"postinstall": "node x.js 1.0"`), a tool's
setting (`timeout = 30`). A manifest that is a program (setup.py, a Gradle build, a
Gemfile) has code for numbers (`os.chmod(path, 0o644)`, `pbkdf2_hmac(..., 100000)`): its
edits are never a bump.
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import PurePosixPath

from reviewbot.code.long_lines import MINIFIED_LINE_CHARS
from reviewbot.code.path_kinds import PROGRAM_MANIFESTS
from reviewbot.lazy_re import lazy_re
from reviewbot.schema.units import DiffLine

# A version as manifests write one (`3.0.3`, `v5.1.0`, `1.0a1`, `2.0.0-rc.1+build`), not a
# digit inside a name (`boto3`, `pkg-2`: a package renamed is not a version bump).
_VERSION = lazy_re(r"(?<![\w.-])v?\d[0-9A-Za-z]*(?:[.+-][0-9A-Za-z]+)*")
# What looks like a version but names an artifact: a commit or a hash (`--hash=sha256:...`,
# `@3f2a9c1`). The artifact changed under the same version is what a reviewer asks about.
_DIGEST = lazy_re(r"v?[0-9a-f]{7,}")
_VERSION_CHARS = 32

# What the text before a version ends with, in every manifest: a comparison or a range
# (`==`, `>=`, `~=`, `!=`, `^`, `~`, `<`, `>`, npm's `||`), the version maybe quoted
# (`python_version<"3.8"`), but not `=>` (go.mod's replace names a module after it); a
# version key (`version = `, `"version": "`, `rust-version = "`, `python_version = "`;
# not a setting's, `tls_min_version`).
_COMPARED = lazy_re(r"(?:===?|[~!<>]=|~>?|\^|<|(?<![=-])>|\|\|)\s*[\"']?$"
                    r"|(?<![\w.-])[\"']?(?:version|python_version|python_full_version|"
                    r"rust-version)[\"']?\s*[=:]\s*[\"']?$")
# `pkg@1.0`, a git URL's `@v1.0`.
_AT = lazy_re(r"@\s*$")
# An address: a version only where compared or named as one (`== 1.2.3.4`), never after
# `@` (`user@10.0.0.1`) or as a key's value (`"host": "0.0.0.0"`).
_ADDRESS = lazy_re(r"\d{1,3}(?:\.\d{1,3}){3}")
# A package's value in JSON or TOML (`"react": "18.2.0"`, `serde = "1.0"`): a version with a
# dot in it (a tool's quoted setting is a plain number, `"30"`), under a key that names no
# version of something else (`tls_min_version = "1.2"`). Not in XML, whose attributes are
# written so (`<chmod perm="777"/>`).
_QUOTED_VALUE = lazy_re(r"(?<![\w.@/-])([\w.@/-]*)[\"']?\s*[=:]\s*[\"']$")
_DOTTED = lazy_re(r"v?\d+\.")
# An XML element the version is the text of: a version's (`<version>`, Maven's
# `<spring.version>` properties), not a setting's (`<forkCount>`).
_ELEMENT = lazy_re(r"<([\w.:-]+)>\s*$")
# go.mod's `go 1.21`, and `require example.com/x v1.2.3`: a `v` version after a space.
_GO_DIRECTIVE = lazy_re(r"^\s*go\s+$")
# conda's `- numpy=1.26` in environment.yml.
_CONDA_PIN = lazy_re(r"^\s*-\s*[A-Za-z0-9][\w.-]*\s*=$")


def only_versions(path: str, lines: tuple[DiffLine, ...]) -> bool:
    """Every removed line of a data manifest is replaced, where it stood, by a line that
    differs from it only in versions (`flask==3.0.0` -> `flask==3.0.3`): a dependency bump.
    A line added or removed alone (a new dependency, another index or source), or moved
    away from where it stood, is not one; nor is a minified manifest's line (over
    MINIFIED_LINE_CHARS: each of its versions would be read against all that precedes it)."""
    lowered = path.lower()
    if any(fnmatch(lowered, glob) for glob in PROGRAM_MANIFESTS):
        return False
    form = "go.mod" if lowered.endswith("go.mod") else PurePosixPath(lowered).suffix
    pairs = 0
    for removed, added in _runs(lines):
        if len(removed) != len(added):
            return False
        for old, new in zip(removed, added, strict=True):
            if (old == new or max(len(old), len(new)) > MINIFIED_LINE_CHARS
                    or _versions_as_one(old, form) != _versions_as_one(new, form)):
                return False
        pairs += len(removed)
    return pairs > 0


def _runs(lines: tuple[DiffLine, ...]) -> list[tuple[list[str], list[str]]]:
    """The hunk's runs of changed lines (between context lines): each run's removed and
    added lines, blank ones left out, trailing space cut (an indent is kept: in YAML it
    says where a line belongs)."""
    runs: list[tuple[list[str], list[str]]] = []
    open_run = False
    for line in lines:
        if line.kind == "ctx":
            open_run = False
            continue
        if not open_run:
            runs.append(([], []))
            open_run = True
        text = line.text.rstrip()
        if text:
            runs[-1][0 if line.kind == "del" else 1].append(text)
    return runs


def _versions_as_one(line: str, form: str) -> str:
    return _VERSION.sub(lambda match: "V" if _is_version(match, form) else match.group(0), line)


def _is_version(match: re.Match[str], form: str) -> bool:
    """Whether a version-shaped token stands where a manifest of this form (its file's
    suffix, or `go.mod`) writes a version."""
    token, line = match.group(0), match.string
    if len(token) > _VERSION_CHARS or _DIGEST.fullmatch(token.lower()):
        return False
    before, after = line[:match.start()], line[match.end():match.end() + 1]
    if before.endswith(("/", "\\")) or after in ("/", ":") or _in_authority(before):
        return False  # a path's part, a host, a port
    element = _ELEMENT.search(before)
    if element is not None:
        name = element.group(1).lower()
        return name == "version" or name.endswith((".version", "-version"))
    if _COMPARED.search(before):
        return True
    if _ADDRESS.fullmatch(token):
        return False
    if _AT.search(before):
        return True
    if form == "go.mod":
        return bool(_GO_DIRECTIVE.match(before)) or (token.startswith("v")
                                                     and before[-1:].isspace())
    if form in (".yml", ".yaml") and _CONDA_PIN.match(before):
        return True
    quoted = None if form == ".xml" else _QUOTED_VALUE.search(before)
    return (quoted is not None and "version" not in quoted.group(1).lower()
            and _DOTTED.match(token) is not None)


def _in_authority(before: str) -> bool:
    """Whether the text ends inside a URL's host part (`https://user@`, `http://host:`)."""
    at = before.rfind("://")
    return at != -1 and not any(c in before[at + 3:] for c in "/ \t\"'")
