"""The frozen Config every stage is handed, from two tiers of files, the environment and flags.

- The **repository** tier (`.reviewbot.toml`, else `[tool.reviewbot]` in pyproject.toml, at
  the reviewed revision) is untrusted input: it sets the review's policy (fail level, rules,
  ignores, guidance for the reviewer) and may *lower* limits, never raise them; it may name a
  model only with a local (loopback) endpoint, which then gets no key.
- The **user** tier (`$REVIEWBOT_CONFIG`, else `~/.config/reviewbot/config.toml`), the
  environment and the flags belong to whoever runs reviewbot: they alone choose endpoints,
  keys and limits.

Each file section is one msgspec Struct (`config_file.py`); an error names the file and the
key, and an unknown key or rule id names the closest known one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec
from msgspec.structs import replace

from reviewbot.config_file import (
    FileConfig,
    LimitsSection,
    ModelSection,
    PathInstruction,
    Prices,
    closest,
    validate,
)
from reviewbot.errors import ConfigError
from reviewbot.levels import SEVERITIES, Severity
from reviewbot.locations import DEFAULT_RUNS, REPO_FILE, has_git_part, user_config_path


class RuleSetting(msgspec.Struct, frozen=True):
    enabled: bool = True
    severity: Severity | None = None
    # The file and key that set it, and whether the person running reviewbot did.
    where: str = ""
    trusted: bool = True


class Origin(msgspec.Struct, frozen=True):
    """Where a setting came from, and whether the person running reviewbot chose it."""

    where: str = "defaults"
    trusted: bool = True


class ModelConfig(msgspec.Struct, frozen=True):
    name: str | None = None
    name_origin: Origin = Origin()
    base_url: str | None = None
    base_url_origin: Origin = Origin()
    fallback_models: tuple[str, ...] = ()
    fallback_origin: Origin = Origin()
    allow_insecure_http: bool = False
    prices: Prices | None = None


class Limits(msgspec.Struct, frozen=True):
    timeout_s: float = 30.0
    model_deadline_s: float = 60.0
    # HTTP requests a run may make; None: by what is reviewed (`calls_for`).
    max_model_calls: int | None = None
    max_run_tokens: int | None = None
    concurrency: int = 4
    context_unit_tokens: int = 6000
    context_run_tokens: int = 60000
    # Processes the rules may use on a large change (at most one per CPU; 1: no fork).
    processes: int = 2
    unit_turns: int = 4
    unit_tool_calls: int = 24
    unit_tokens: int = 40_000
    unit_seconds: float = 90.0
    reply_tokens: int = 2048
    # The agent's conversations for the risky units of a change small enough to be read
    # whole in one call (review/route.py); off, such a change is that one call.
    small_change_agent: bool = False

    def calls_for(self, mode: str) -> int:
        """The call cap: as set, else 30 for a commit hook (staged, working: a hook that
        waits on minutes of model calls gets switched off) and 300 for a pull request, where
        a unit's conversation takes 3 or more calls and every unit should get one."""
        if self.max_model_calls is not None:
            return self.max_model_calls
        return 300 if mode in ("pr", "github") else 30


class Config(msgspec.Struct, frozen=True):
    fail_level: Severity = "error"
    output_dir: Path | None = None
    # Which file or flag chose output_dir, for errors about it, and whether the person
    # running reviewbot chose it (else it must stay inside the repository, symlinks resolved).
    output_origin: str = "the default"
    output_trusted: bool = False
    keep_runs: int = 20
    # Glob patterns (fnmatch, on repository paths) of files not to review, and where each
    # came from.
    ignore: tuple[str, ...] = ()
    ignore_origins: Mapping[str, Origin] = msgspec.field(default_factory=dict)
    rules: Mapping[str, RuleSetting] = msgspec.field(default_factory=dict)
    # (glob, rule id -> setting), in the order read: the last match wins over `rules`.
    path_rules: tuple[tuple[str, Mapping[str, RuleSetting]], ...] = ()
    instructions: str = ""
    path_instructions: tuple[PathInstruction, ...] = ()
    # Whether model findings can fail the run; None: only outside the pre-commit hook.
    model_findings_block: bool | None = None
    # Pull requests on which a rule must be dismissed in one place before reviewbot proposes
    # the setting that stops it there (0: never).
    dismissals_to_propose: int = 3
    model: ModelConfig = ModelConfig()
    limits: Limits = Limits()
    # The files read, in the order they were applied.
    sources: tuple[str, ...] = ()
    # The repository's file as a repository path (None: none, or a --config outside it), and
    # whether it was read at the base (else from the work tree): who decided its policy.
    repository_file: str | None = None
    repository_at_base: bool = False
    # Read from the work tree, whether it differs from the hook's base (HEAD): an untracked,
    # unstaged or staged edit is the change's word, never the base's.
    repository_edited: bool = False
    # What the user should hear about the files (one ignored for another).
    notes: tuple[str, ...] = ()

    def rule(self, rule_id: str, path: str | None = None) -> RuleSetting:
        """The rule's setting, for a file when `path` is given (`[[path_rules]]`)."""
        setting = self.rules.get(rule_id, RuleSetting())
        if path is not None:
            for glob, rules in self.path_rules:
                if rule_id in rules and (fnmatch(path, glob) or
                                         fnmatch(PurePosixPath(path).name, glob)):
                    setting = rules[rule_id]
        return setting

    @property
    def source(self) -> str:
        return " + ".join(self.sources) or "defaults"


ReadRepoFile = Callable[[str], bytes | None]


def load_config(repo_root: Path, known_rules: Collection[str] = (), *,
                read_repo_file: ReadRepoFile | None = None, revision: str = "",
                repo_config: Path | None = None,
                env: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the user's file, then the repository's file, then the environment.

    The repository's policy (fail level, rules, ignores) wins over the user's defaults for it;
    it cannot override the user's model, endpoint or limits (see `apply_file`).

    `read_repo_file` reads the repository tier at `revision` (the base of a pull request, so
    a change cannot loosen its own review); the work tree by default.
    `repo_config` (`--config`) replaces the repository file's usual location, in the same
    tier and read the same way: a file in the repository through `read_repo_file`, a file
    outside it (the user's own) from disk.
    """
    env = os.environ if env is None else env
    config = Config()
    user = user_config_path(env)
    named = bool(env.get("REVIEWBOT_CONFIG"))
    if named and str(user) == os.devnull:
        user = Path()  # REVIEWBOT_CONFIG=/dev/null: no user file, on purpose
    elif named and not user.is_file():
        raise ConfigError(f"{user} (given with REVIEWBOT_CONFIG) is not a file; fix the path, "
                          "or unset REVIEWBOT_CONFIG to use ~/.config/reviewbot/config.toml.")
    if user.is_file():
        table = _parse_toml(_read_bytes(user), str(user))
        config = apply_file(config, table, str(user), repo_root, known_rules, trusted=True)
    notes: list[str] = []
    repo = _repo_file(repo_root, read_repo_file, revision, repo_config, notes)
    if repo is not None:
        config = replace(apply_file(config, repo[1], repo[0], repo_root, known_rules,
                                    trusted=False),
                         repository_file=repo[2], repository_at_base=read_repo_file is not None)
    return replace(apply_environment(config, env), notes=tuple(notes))


_RepoFile = tuple[str, dict[str, Any], str | None]


def _repo_file(root: Path, read: ReadRepoFile | None, revision: str,
               explicit: Path | None, notes: list[str]) -> _RepoFile | None:
    """(where it was read, its table, its repository path) of the repository's file."""
    if explicit is not None:
        return _explicit_file(root, read, revision, explicit)
    reader = read or (lambda name: _read_optional(root / name))

    def where(name: str) -> str:
        return f"{name} at {revision}" if read else str(root / name)
    own = reader(REPO_FILE)
    pyproject = reader("pyproject.toml")
    table = (_parse_toml(pyproject, where("pyproject.toml")).get("tool", {}).get("reviewbot")
             if pyproject is not None and b"reviewbot" in pyproject else None)
    source = f"{where('pyproject.toml')} [tool.reviewbot]"
    if own is not None:
        if table is not None:
            notes.append(f"both {where(REPO_FILE)} and {source} hold reviewbot's settings: "
                         f"{REPO_FILE} is used and the pyproject.toml table is not")
        return where(REPO_FILE), _parse_toml(own, where(REPO_FILE)), REPO_FILE
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{source} must be a table.")
    return source, table, "pyproject.toml"


def _explicit_file(root: Path, read: ReadRepoFile | None, revision: str,
                   given: Path) -> _RepoFile:
    """`--config FILE`: a file in the repository is read as .reviewbot.toml is (at the base
    of a pull request, never the change's copy); one outside it is the user's, from disk."""
    inside = repository_path(root, given) if read is not None else None
    if read is None or inside is None:
        path = given if given.is_absolute() else root / given
        if not path.is_file():
            raise ConfigError(f"{path} (given with --config) is not a file.")
        written = Path(os.path.normpath(path))
        name = (written.relative_to(root).as_posix()
                if read is None and written.is_relative_to(root) else None)
        return str(path), _parse_toml(_read_bytes(path), str(path)), name
    data = read(inside)
    if data is None:
        raise ConfigError(f"{inside} (given with --config) is not in {revision}: commit it to "
                          "the base branch first, or pass an absolute path to a file outside "
                          "the repository.")
    source = f"{inside} at {revision}"
    return source, _parse_toml(data, source), inside


def repository_path(root: Path, given: Path) -> str | None:
    """Where `--config` names a file in the repository (a path from its root), or None when
    it names one outside. Judged on the path as written (a relative one is from the root):
    a symlink in the work tree, which the change under review controls, never decides."""
    written = Path(os.path.normpath(root / given))
    if written.is_relative_to(root):
        return written.relative_to(root).as_posix()
    real_root = root.resolve()
    for folder in written.parents:  # the root by another name (a symlinked /tmp)
        if folder.resolve() == real_root:
            return written.relative_to(folder).as_posix()
    if written.resolve().is_relative_to(real_root):
        raise ConfigError(f"{given} (given with --config) leads into the repository through "
                          "a symlink; give its path in the repository instead, so it is read "
                          "as the repository's files are.")
    return None


def apply_file(config: Config, table: Mapping[str, Any], source: str, repo_root: Path,
               known_rules: Collection[str] = (), *, trusted: bool) -> Config:
    """A file's settings on top of `config`. An untrusted (repository) file sets policy, but
    names a model or endpoint only where the user has not, and only lowers limits."""
    parsed = validate(table, source)
    _check_trust(parsed, source, trusted)
    _check_rule_ids(parsed.rules, known_rules, source)
    for entry in parsed.path_rules:
        _check_rule_ids(entry.rules, known_rules, f"{source}: path_rules {entry.path!r}")
    updates: dict[str, Any] = {"sources": (*config.sources, source)}
    for key in ("fail_level", "keep_runs", "model_findings_block", "dismissals_to_propose"):
        value = getattr(parsed, key)
        if value is not None:
            updates[key] = value
    if parsed.output_dir is not None:
        updates["output_dir"] = _output_dir(parsed.output_dir, source, repo_root, trusted)
        updates["output_origin"] = f"output_dir in {source}"
        updates["output_trusted"] = trusted
    if parsed.ignore:
        updates["ignore"] = (*config.ignore, *parsed.ignore)
        updates["ignore_origins"] = {**config.ignore_origins,
                                     **dict.fromkeys(parsed.ignore, Origin(source, trusted))}
    if parsed.instructions:
        updates["instructions"] = "\n\n".join(t for t in (config.instructions,
                                                          parsed.instructions) if t)
    if parsed.path_instructions:
        updates["path_instructions"] = (*config.path_instructions, *parsed.path_instructions)
    updates |= _rule_updates(config, parsed, source, trusted)
    updates["model"] = _model(config.model, parsed.model, Origin(source, trusted))
    if parsed.limits is not None:
        updates["limits"] = _limits(config.limits, parsed.limits, trusted)
    return replace(config, **updates)


def _rule_updates(config: Config, parsed: FileConfig, source: str,
                  trusted: bool) -> dict[str, Any]:
    updates: dict[str, Any] = {}
    if parsed.rules:
        updates["rules"] = {**config.rules, **{
            k: _rule_setting(v, f"{source}: rules.{k}", trusted)
            for k, v in parsed.rules.items()}}
    if parsed.path_rules:
        updates["path_rules"] = (*config.path_rules, *(
            (entry.path, {k: _rule_setting(v, f"{source}: path_rules {entry.path!r}: {k}",
                                           trusted)
                          for k, v in entry.rules.items()})
            for entry in parsed.path_rules))
    return updates


def _check_rule_ids(rules: Mapping[str, str | bool], known: Collection[str],
                    source: str) -> None:
    if not known:
        return
    for rule_id in rules:
        if rule_id not in known:
            raise ConfigError(
                f"{source}: rules.{rule_id} is not a rule{closest(rule_id, known)} "
                "(`reviewbot rules` lists every id).")


def _check_trust(parsed: FileConfig, source: str, trusted: bool) -> None:
    if trusted:
        return
    if parsed.model.allow_insecure_http:
        raise ConfigError(f"{source}: model.allow_insecure_http can only be set in your user "
                          "config or the environment, not by the reviewed repository.")
    if parsed.model.base_url is not None and not is_loopback_url(parsed.model.base_url):
        raise ConfigError(
            f"{source}: model.base_url {parsed.model.base_url!r} is not a server on this "
            "machine. A repository may only name a local server (127.0.0.1, localhost, ::1), "
            "which gets no key; to use another endpoint, set OPENAI_BASE_URL or --base-url "
            "yourself.")


def _rule_setting(value: str | bool, where: str, trusted: bool = True) -> RuleSetting:
    if isinstance(value, bool) or value == "off":
        return RuleSetting(enabled=value is True, where=where, trusted=trusted)
    if value not in SEVERITIES:
        raise ConfigError(f"{where} must be \"off\", \"error\", \"warning\", \"info\", true "
                          f"or false, not {value!r}.")
    return RuleSetting(severity=value, where=where, trusted=trusted)


def _output_dir(value: str, source: str, repo_root: Path, trusted: bool) -> Path:
    path = Path(value).expanduser()
    folder = path if path.is_absolute() else repo_root / path
    # Either tier: a run folder among git's files breaks the repository (see paths).
    if has_git_part(folder, repo_root):
        raise ConfigError(f"{source}: output_dir {value!r} is inside a .git folder, among "
                          "git's own files; choose another folder (the default is "
                          f"{DEFAULT_RUNS.as_posix()}).")
    if trusted:
        return folder
    pure = PurePosixPath(value)
    if pure.is_absolute() or ".." in pure.parts:
        raise ConfigError(f"{source}: output_dir {value!r} must be a folder inside the "
                          "repository (a relative path without '..'); pass --output-dir "
                          "for anywhere else.")
    return repo_root / pure


def _model(current: ModelConfig, section: ModelSection, origin: Origin) -> ModelConfig:
    updates: dict[str, Any] = {}
    # The user's choice of model stands; a repository only fills in what the user left open.
    user_chose = current.name is not None and not origin.trusted
    if section.name is not None and not user_chose:
        updates |= {"name": section.name, "name_origin": origin}
        if section.fallback_models:
            updates |= {"fallback_models": tuple(section.fallback_models),
                        "fallback_origin": origin}
    if section.base_url is not None and (origin.trusted or current.base_url is None):
        updates |= {"base_url": section.base_url, "base_url_origin": origin}
    if section.allow_insecure_http:
        updates["allow_insecure_http"] = True
    if section.prices is not None and (origin.trusted or current.prices is None):
        updates["prices"] = section.prices
    return replace(current, **updates)


def _limits(current: Limits, section: LimitsSection, trusted: bool) -> Limits:
    given = {key: getattr(section, key) for key in section.__struct_fields__
             if getattr(section, key) is not None}
    if trusted:
        return replace(current, **given)
    # A repository may spend less than the user allows, never more.
    lowered = {key: value if getattr(current, key) is None else min(value, getattr(current, key))
               for key, value in given.items()}
    return replace(current, **lowered)


def apply_environment(config: Config, env: Mapping[str, str]) -> Config:
    """REVIEWBOT_MODEL and OPENAI_BASE_URL (or REVIEWBOT_BASE_URL): the user's own choice."""
    model = config.model
    name = env.get("REVIEWBOT_MODEL")
    if name:
        model = replace(model, name=name, name_origin=Origin("REVIEWBOT_MODEL"))
    for variable in ("REVIEWBOT_BASE_URL", "OPENAI_BASE_URL"):
        if variable in env:
            if not env[variable].strip():
                raise ConfigError(f"{variable} is set but empty; unset it to use the default "
                                  "endpoint, or set it to the server's URL.")
            model = replace(model, base_url=env[variable].strip(),
                            base_url_origin=Origin(variable))
            break
    if env.get("REVIEWBOT_ALLOW_INSECURE_HTTP") == "1":
        model = replace(model, allow_insecure_http=True)
    return replace(config, model=model)


def is_loopback_url(url: str) -> bool:
    """Whether a URL names this machine: `localhost` by name, else a loopback *address*
    (127.0.0.0/8, ::1). `127.0.0.1.example.com` is a name like any other: looked up in DNS,
    it could be anywhere."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}.") from exc


def _read_optional(path: Path) -> bytes | None:
    return _read_bytes(path) if path.is_file() else None


def _parse_toml(data: bytes, source: str) -> dict[str, Any]:
    import tomllib  # only with a config file: the hook without one does not load it

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source} is not UTF-8 text (byte {exc.start}); save it as "
                          "UTF-8.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}") from exc
