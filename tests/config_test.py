"""Configuration: two tiers of files, the environment, and who may choose endpoints and keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.config import Config, load_config
from reviewbot.errors import ConfigError
from reviewbot.model import model_settings
from reviewbot.rules import RULES

KEY = "sk-test-DO-NOT-LEAK-0123456789"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".config" / "reviewbot").mkdir(parents=True)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def load(root: Path, home: Path, repo: str = "", user: str = "",
         **env: str) -> Config:
    if repo:
        (root / ".reviewbot.toml").write_text(repo, encoding="utf-8")
    if user:
        (home / ".config" / "reviewbot" / "config.toml").write_text(user, encoding="utf-8")
    return load_config(root, RULES.keys(), env={"HOME": str(home), **env})


def error(root: Path, home: Path, repo: str = "", user: str = "", **env: str) -> str:
    with pytest.raises(ConfigError) as exc:
        load(root, home, repo, user, **env)
    return str(exc.value)


def test_defaults_without_files(root: Path, home: Path) -> None:
    config = load(root, home)
    assert (config.fail_level, config.ignore, config.model.name) == ("error", (), None)
    assert config.limits.max_model_calls is None and config.source == "defaults"
    # The call cap by what is reviewed: a commit hook waits on few calls, a pull request
    # gets enough for every unit's conversation.
    assert (config.limits.calls_for("staged"), config.limits.calls_for("pr"),
            config.limits.calls_for("github")) == (30, 300, 300)


def test_repository_file_sets_policy(root: Path, home: Path) -> None:
    config = load(root, home, repo=(
        'fail_level = "warning"\nignore = ["docs/*"]\ninstructions = "Check auth."\n'
        '[rules]\n"js.console-log" = "off"\n"python.weak-hash" = "warning"\n'
        '"python.debug-leftover" = false\n'
        '[[path_instructions]]\npath = "api/*"\ninstructions = "Every route needs a check."\n'))
    assert (config.fail_level, config.ignore, config.instructions) == (
        "warning", ("docs/*",), "Check auth.")
    assert config.rule("js.console-log").enabled is False
    assert config.rule("python.debug-leftover").enabled is False
    assert config.rule("python.weak-hash").severity == "warning"
    assert config.path_instructions[0].path == "api/*"


def test_each_setting_that_quietens_says_who_set_it(root: Path, home: Path) -> None:
    """What quietens a finding (a rule off or re-levelled, an ignore glob) names the file
    and key that set it and whether the user did (rules/policy.py decides who it was)."""
    config = load(root, home, repo='ignore = ["*_pb2.py"]\n[rules]\n"js.eval" = "off"\n',
                  user='ignore = ["build/*"]\n[rules]\n"js.console-log" = "info"\n')
    off, mine = config.rule("js.eval"), config.rule("js.console-log")
    assert (off.enabled, off.trusted, off.where) == (
        False, False, f"{root / '.reviewbot.toml'}: rules.js.eval")
    assert (mine.severity, mine.trusted) == ("info", True)
    assert {glob: origin.trusted for glob, origin in config.ignore_origins.items()} == {
        "*_pb2.py": False, "build/*": True}
    assert (config.repository_file, config.repository_at_base) == (".reviewbot.toml", False)


def test_pyproject_table(root: Path, home: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.reviewbot]\nfail_level = "info"\n')
    config = load(root, home)
    assert config.fail_level == "info" and config.notes == ()


def test_both_repository_files_say_which_is_used(root: Path, home: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.reviewbot]\nfail_level = "info"\n')
    config = load(root, home, repo='fail_level = "warning"\n')
    assert config.fail_level == "warning"
    [note] = config.notes
    assert ".reviewbot.toml is used and the pyproject.toml table is not" in note


@pytest.mark.parametrize(("repo", "message"), [
    ('fail_levle = "warning"\n', "unknown key 'fail_levle'; did you mean 'fail_level'?"),
    ('[model]\nnmae = "x"\n', "unknown key 'model.nmae'; did you mean 'name'?"),
    ('[rules]\n"python.eval-exce" = "off"\n',
     "rules.python.eval-exce is not a rule; did you mean 'python.eval-exec'?"),
    ('[rules]\n"python.eval-exec" = "fatal"\n',
     'rules.python.eval-exec must be "off", "error", "warning", "info", true or false, '
     "not 'fatal'"),
    ("[limits]\nmax_model_calls = 0.5\n", "limits.max_model_calls: must be an integer (got 0.5)"),
    ("[limits]\ntimeout_s = -1\n", "limits.timeout_s: must be greater than 0 (got -1)"),
    ("[limits]\ntimeout_s = true\n", "limits.timeout_s: must be a number (got True)"),
    ('[limits]\nprocesses = "3"\n', "limits.processes: must be an integer (got '3')"),
    ('model = "gpt"\n', "model: must be a table (got 'gpt')"),
    ('ignore = ["a", 3]\n', "ignore[1]: must be a string (got 3)"),
    ('[rules]\n"python.eval-exec" = 3\n', "rules.*: must be true or false or a string"),
    ('[[path_instructions]]\npath = ""\ninstructions = "x"\n',
     "path_instructions[0].path: must not be empty"),
    ('[[path_instructions]]\npath = "*.py"\ninstrutions = "x"\n',
     "unknown key 'path_instructions.instrutions'; did you mean 'instructions'?"),
    ('instructions = "' + "x" * 9000 + '"\n',
     "instructions: must have at most 8000 characters (got 'xxx"),
    ("[model.prices]\ninput_per_million = 1\n",
     "model.prices: object missing required field `output_per_million`"),
    ('api_key = "sk-123"\n', "keep the API key out of files"),
    ('output_dir = "../../.ssh"\n', "must be a folder inside the repository"),
    ('output_dir = ".git/refs/heads"\n', "output_dir '.git/refs/heads' is inside a .git folder"),
    ('output_dir = "vendor/.GIT/x"\n', "is inside a .git folder"),
    ('[model]\nbase_url = "https://collect.example.com/v1"\n',
     "is not a server on this machine"),
    ("[model]\nallow_insecure_http = true\n", "can only be set in your user config"),
    ("fail_level = [", "is not valid TOML"),
])
def test_repository_errors_name_the_file_and_key(root: Path, home: Path, repo: str,
                                                 message: str) -> None:
    text = error(root, home, repo=repo)
    assert text.startswith(f"{root / '.reviewbot.toml'}")
    assert message in text


def test_non_utf8_config_is_a_config_error(root: Path, home: Path) -> None:
    (root / ".reviewbot.toml").write_bytes(b'fail_level = "warn\xe9"\n')
    assert "is not UTF-8 text" in error(root, home)


def test_user_tier_chooses_model_endpoint_and_limits(root: Path, home: Path) -> None:
    config = load(root, home, user=(
        '[model]\nname = "gpt-4o-mini"\nbase_url = "https://llm.internal.example/v1"\n'
        "[limits]\nmax_model_calls = 80\ntimeout_s = 60\n"),
        repo='[model]\nname = "repo-model"\n[limits]\nmax_model_calls = 500\n')
    assert config.model.name == "gpt-4o-mini" and config.model.name_origin.trusted
    assert config.model.base_url == "https://llm.internal.example/v1"
    # The repository may lower a limit, never raise it.
    assert (config.limits.max_model_calls, config.limits.timeout_s) == (80, 60)
    lowered = load(root, home, repo="[limits]\nmax_model_calls = 5\n")
    assert lowered.limits.max_model_calls == 5


def test_processes_are_the_users_to_raise(root: Path, home: Path) -> None:
    assert load(root, home).limits.processes == 2
    assert load(root, home, repo="[limits]\nprocesses = 64\n").limits.processes == 2
    assert load(root, home, repo="[limits]\nprocesses = 1\n").limits.processes == 1
    (root / ".reviewbot.toml").unlink()
    assert load(root, home, user="[limits]\nprocesses = 4\n").limits.processes == 4
    assert "processes: must be at least 1 (got 0)" in error(root, home, "[limits]\nprocesses = 0\n")


def test_key_goes_only_where_the_user_sent_it(root: Path, home: Path) -> None:
    user_choice = load(root, home, REVIEWBOT_MODEL="gpt-4o-mini")
    settings = model_settings(user_choice, {"OPENAI_API_KEY": KEY})
    assert settings is not None and settings.api_key == KEY and settings.base_url is None
    assert KEY not in repr(settings)


def test_repository_endpoint_is_used_without_the_key(root: Path, home: Path) -> None:
    notices: list[str] = []
    config = load(root, home, repo='[model]\nname = "qwen"\nbase_url = "http://127.0.0.1:9/v1"\n',
                  REVIEWBOT_MODEL="qwen")
    settings = model_settings(config, {"OPENAI_API_KEY": KEY}, notices.append)
    assert settings is not None and settings.api_key is None
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert notices == [f"the model endpoint comes from {root / '.reviewbot.toml'}, the reviewed "
                       "repository's config: your API key is not sent to it."]


def test_repository_model_alone_does_not_spend_the_users_key(root: Path, home: Path) -> None:
    notices: list[str] = []
    config = load(root, home, repo='[model]\nname = "gpt-4o"\n')
    assert model_settings(config, {"OPENAI_API_KEY": KEY}, notices.append) is None
    assert "names the model 'gpt-4o' but no local server" in notices[0]


def test_environment_wins_and_empty_base_url_is_an_error(root: Path, home: Path) -> None:
    config = load(root, home, user='[model]\nbase_url = "https://a.example/v1"\n',
                  OPENAI_BASE_URL="https://b.example/v1", REVIEWBOT_MODEL="m")
    assert config.model.base_url == "https://b.example/v1"
    assert config.model.base_url_origin.where == "OPENAI_BASE_URL"
    assert "OPENAI_BASE_URL is set but empty" in error(root, home, OPENAI_BASE_URL="")


@pytest.mark.parametrize(("url", "allowed"), [
    ("https://api.example.com/v1", True),
    ("http://127.0.0.1:11434/v1", True),
    ("http://localhost:8000/v1", True),
    ("http://[::1]:8000/v1", True),
    ("http://10.0.0.5:8000/v1", False),
    ("ftp://example.com/v1", False),
    ("not a url", False),
])
def test_endpoint_checks(root: Path, home: Path, url: str, allowed: bool) -> None:
    config = load(root, home, REVIEWBOT_MODEL="m", OPENAI_BASE_URL=url)
    if allowed:
        assert model_settings(config, {}) is not None
    else:
        with pytest.raises(ConfigError):
            model_settings(config, {})


def test_plain_http_on_a_network_the_user_owns(root: Path, home: Path) -> None:
    config = load(root, home, REVIEWBOT_MODEL="m", OPENAI_BASE_URL="http://10.0.0.5:8000/v1",
                  REVIEWBOT_ALLOW_INSECURE_HTTP="1")
    assert model_settings(config, {}) is not None


def test_user_config_location(root: Path, home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "team.toml"
    elsewhere.write_text('fail_level = "info"\n')
    config = load_config(root, env={"HOME": str(home), "REVIEWBOT_CONFIG": str(elsewhere)})
    assert config.fail_level == "info" and config.sources == (str(elsewhere),)


def test_the_users_own_output_dir_is_never_in_git(root: Path, home: Path) -> None:
    """The user's file may put run folders anywhere but inside a .git folder."""
    assert load(root, home, user='output_dir = "/srv/runs"\n').output_dir == Path("/srv/runs")
    message = error(root, home, user='output_dir = "~/src/app/.git/runs"\n')
    assert message.startswith(str(home / ".config" / "reviewbot" / "config.toml"))
    assert "is inside a .git folder, among git's own files" in message


def test_a_missing_user_config_is_said(root: Path, home: Path, tmp_path: Path) -> None:
    """REVIEWBOT_CONFIG naming no file is an error, as --config naming none is."""
    assert "(given with REVIEWBOT_CONFIG) is not a file" in error(
        root, home, REVIEWBOT_CONFIG=str(tmp_path / "nonexistent.toml"))


def test_a_user_config_of_dev_null_is_none(root: Path, home: Path) -> None:
    """REVIEWBOT_CONFIG=/dev/null says "no user file" on purpose (as GIT_CONFIG_GLOBAL does):
    the defaults, not an error."""
    import os

    config = load_config(root, RULES.keys(), env={"HOME": str(home),
                                                   "REVIEWBOT_CONFIG": os.devnull})
    assert config.sources == ()
