"""What kind of file a path is (tests, docs, lockfile, CI workflow, ...), from its name."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import PurePosixPath

from reviewbot.code.languages import detect_language
from reviewbot.code.whole_text import WholeTextPattern, compile_whole_text
from reviewbot.schema.records import Tag

# Dependency manifests that are programs (Python, Groovy or Kotlin, Ruby): a number in them
# may be code, not a version (rules/version_bumps.py).
PROGRAM_MANIFESTS = ("setup.py", "*build.gradle*", "gemfile")

# (tag, glob patterns on the lower-cased path). A path can carry several tags.
_PATH_TAGS: tuple[tuple[Tag, tuple[str, ...]], ...] = (
    ("lockfile", ("*package-lock.json", "*yarn.lock", "*pnpm-lock.yaml", "*poetry.lock",
                  "*pipfile.lock", "*cargo.lock", "*go.sum", "*gemfile.lock",
                  "*composer.lock", "*uv.lock", "*npm-shrinkwrap.json")),
    ("vendored", ("vendor/*", "*/vendor/*", "third_party/*", "*/third_party/*",
                  "node_modules/*", "*/node_modules/*", "external/*", "*/_vendor/*")),
    ("generated", ("*.min.js", "*.min.css", "*_pb2.py", "*_pb2_grpc.py", "*.pb.go",
                   "*.generated.*", "*_generated.*", "dist/*", "*/dist/*", "*.snap")),
    ("ci_workflow", (".github/workflows/*", ".gitlab-ci.yml", "jenkinsfile", "*/jenkinsfile",
                     ".circleci/*", "azure-pipelines.yml", ".travis.yml",
                     "bitbucket-pipelines.yml", ".github/actions/*")),
    ("dependency_manifest", ("*requirements*.txt", "pyproject.toml", "*/pyproject.toml",
                             "setup.cfg", "pipfile", "*package.json", "go.mod", "*/go.mod",
                             "*cargo.toml", "*pom.xml", "*composer.json", "*environment.yml",
                             *PROGRAM_MANIFESTS)),
    ("migration", ("*/migrations/*", "migrations/*", "*/migrate/*", "*alembic/versions/*",
                   "*/db/migrate/*", "*flyway/*", "*/changelog/*.sql")),
    ("routing_file", ("*urls.py", "*routes.*", "*/routes/*", "*router.*", "*/routers/*",
                      "*routing.*", "config/routes.rb")),
    ("test_file", ("tests/*", "*/tests/*", "test/*", "*/test/*", "*/__tests__/*",
                   "test_*.py", "*/test_*.py", "*_test.py", "*_test.go", "*.test.*",
                   "*.spec.*", "*/src/test/*", "*/testdata/*", "testdata/*", "conftest.py",
                   "*/conftest.py", "*/fixtures/*", "fixtures/*", "*/__fixtures__/*",
                   "__fixtures__/*",
                   # A repository's own test helpers (pre-commit's); a package's `testing`
                   # module (numpy.testing) is code its users import, so only at the root.
                   "testing/*")),
    ("docs", ("*.md", "*.rst", "*.adoc", "docs/*", "*/docs/*", "doc/*", "license*",
              "changelog*", "*/changelog*", "authors*", "readme*", "*/readme*")),
    ("config_file", ("*.yaml", "*.yml", "*.toml", "*.ini", "*.cfg", "*.conf", "*.properties",
                     "*.env", ".env*", "*/.env*", "*settings.py", "*config.py", "*/config/*",
                     "config/*", "dockerfile", "*/dockerfile", "*docker-compose*.yml",
                     "*.json", "*.tf", "*.hcl")),
)


def _glob_source(glob: str) -> str:
    """A glob of the table above as RE2 syntax: `*` is any run of characters, `/` too, as
    fnmatch reads it (the table holds no `?` or `[...]`; a test checks)."""
    return ".*".join(re.escape(part) for part in glob.split("*"))


# One compiled pattern per tag: fnmatch on each glob, for each path, was a tenth of a
# small hook's time; compiled by RE2, the table costs the hook's start nothing measurable
# (`re` took 3 ms to compile it).
_COMPILED: tuple[tuple[Tag, WholeTextPattern], ...] = tuple(
    (tag, compile_whole_text("(?s)" + "|".join(f"(?:{_glob_source(g)})" for g in globs)))
    for tag, globs in _PATH_TAGS)


# What documentation is made of: code under docs/ (a Sphinx conf.py, an example app) or a
# module named like a docs file (authors/views.py, licenses/api.py, changelog_service.py) is
# code.
DOCUMENT_LANGUAGES = frozenset({"markdown", "rst", "text", "html"})


@lru_cache(maxsize=4096)
def _tags(lowered: str) -> tuple[Tag, ...]:
    encoded = lowered.encode("utf-8", "surrogatepass")
    return tuple(tag for tag, pattern in _COMPILED if pattern.fullmatch(encoded)
                 and (tag != "docs" or detect_language(lowered) in DOCUMENT_LANGUAGES))


def path_tags(path: str) -> list[Tag]:
    return list(_tags(path.lower()))


def matches_any(path: str, globs: Iterable[str]) -> bool:
    return any(fnmatch(path, g) or fnmatch(PurePosixPath(path).name, g) for g in globs)
