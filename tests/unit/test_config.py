"""bugbout.toml: defaults, every key, and the exact wording and line of every kind of error."""

from __future__ import annotations

import os
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from bugbout_tui.agents import BUILTIN_AGENTS
from bugbout_tui.core.agent_facts import BUILTIN_FACTS
from bugbout_tui.core.config import (
    Config,
    ConfigError,
    load_config,
)
from bugbout_tui.core.config_errors import key_lines
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.git_urls import is_git_url
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

MINIMAL = '[project]\nsource = "src/pkg"\n'


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with its package, as the working directory."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(repo: Path, text: str) -> Path:
    path = repo / "bugbout.toml"
    path.write_text(text)
    return path


def problems(repo: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(write(repo, text))
    return str(caught.value).splitlines()


def test_defaults(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL))
    project = config.project
    assert project.source == "src/pkg"
    assert project.tests == "tests"
    assert project.repository == "."
    assert project.github is None
    assert project.python is None
    assert project.python_version() == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert project.test_dependencies == ["pytest"]
    assert project.pytest_args == []
    assert project.env == {}
    assert project.install_project is True
    assert project.interpreter is None
    assert project.issues_file is None
    assert config.tasks.since is None
    assert config.tasks.limit == 20
    assert config.tasks.max_source_files == 2
    assert config.tasks.include == [] and config.tasks.exclude == []
    assert config.tasks.require_review is False
    assert config.run.sandbox == "auto"
    assert config.run.agent_view == "host"
    assert config.run.timeout == 1800
    assert config.run.quotas == {}
    assert config.run.capacity("codex") == 1
    assert (config.run.max_patch_files, config.run.max_patch_bytes) == (5000, 10 * 1024 * 1024)
    assert config.judge.policy == "majority"
    assert config.judge.run_suite is True
    assert config.contestants == [] and config.examiners == []
    assert config.file == repo / "bugbout.toml"
    assert config.root == repo
    assert project.repository_dir(config.root) == repo


def test_every_key_parses(repo: Path) -> None:
    python = repo / "bin" / "python3"
    python.parent.mkdir()
    python.write_text("")
    (repo / "issues.json").write_text("[]")
    text = f"""
[project]
source = "src/pkg/"
tests = "test"
repository = "."
github = "octo/widgets"
python = "3.12"
test-dependencies = ["pytest", "hypothesis"]
pytest-args = ["-p", "no:randomly"]
env = {{ DATABASE_URL = "sqlite://", MODE = "test" }}
install-project = false
interpreter = "{python}"
issues-file = "issues.json"

[tasks]
since = 2023-01-15
limit = 5
max-source-files = 3
include = ["pkg-1"]
exclude = ["pkg-2"]
require-review = true

[run]
sandbox = "bubblewrap"
timeout = 600
quotas = {{ codex = 2, shared = 3 }}
max-patch-files = 300
max-patch-bytes = 2000000

[judge]
policy = "cross-vendor"
run-suite = false

[[contestants]]
agent = "codex"
model = "gpt-5-codex"
reasoning-effort = "high"
local-provider = "ollama"

[[contestants]]
agent = "claude-code"
name = "claude"
vendor = "anthropic"
quota = "shared"
effort = "high"

[[contestants]]
agent = "mini-swe-agent"
model = "ollama/qwen3-coder:30b"
text-actions = true
step-limit = 50
model-kwargs = {{ temperature = "0" }}

[[contestants]]
agent = "command"
name = "aider"
command = ["aider", "--message-file", "{{prompt_file}}"]
env = {{ AIDER_X = "1" }}
state-dirs = ["~/.aider"]
sandboxed = false

[[examiners]]
agent = "gemini-cli"
assignment = "specify"
"""
    config = load_config(write(repo, text))
    project = config.project
    assert project.source == "src/pkg"
    assert project.tests == "test"
    assert project.github == "octo/widgets"
    assert project.python_version() == "3.12"
    assert project.test_dependencies == ["pytest", "hypothesis"]
    assert project.pytest_args == ["-p", "no:randomly"]
    assert project.env == {"DATABASE_URL": "sqlite://", "MODE": "test"}
    assert project.install_project is False
    assert config.resolve(project.interpreter or "") == python
    assert config.resolve(project.issues_file or "") == repo / "issues.json"
    assert config.tasks.since == date(2023, 1, 15)
    assert (config.tasks.limit, config.tasks.max_source_files) == (5, 3)
    assert config.tasks.require_review is True
    assert config.run.sandbox == "bubblewrap"
    assert config.run.timeout == 600
    assert config.run.capacity("codex") == 2
    assert config.run.capacity("shared") == 3
    assert config.run.capacity("gemini-cli") == 1
    assert (config.run.max_patch_files, config.run.max_patch_bytes) == (300, 2_000_000)
    assert config.judge.policy == "cross-vendor"
    assert config.judge.run_suite is False

    codex, claude, mini, aider = config.contestants
    assert (codex.name, codex.vendor, codex.quota) == ("codex/gpt-5-codex", "openai", "codex")
    assert codex.options == {"reasoning-effort": "high", "local-provider": "ollama"}
    assert (claude.name, claude.vendor, claude.quota) == ("claude", "anthropic", "shared")
    assert claude.options == {"effort": "high"}
    assert mini.name == "mini-swe-agent/ollama/qwen3-coder:30b"
    assert mini.vendor == "alibaba"
    assert mini.options == {
        "text-actions": True,
        "step-limit": 50,
        "model-kwargs": {"temperature": "0"},
    }
    assert aider.name == "aider" and aider.vendor == "unknown" and aider.quota == "command"
    assert aider.options["command"] == ["aider", "--message-file", "{prompt_file}"]
    assert aider.options["sandboxed"] is False
    (gemini,) = config.examiners
    assert (gemini.name, gemini.vendor, gemini.assignment) == ("gemini-cli", "google", "specify")
    assert [agent.name for agent in config.agents][-1] == "gemini-cli"
    assert config.model_dump()["tasks"]["max-source-files"] == 3


def test_since_may_be_a_string(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL + '[tasks]\nsince = "2022-12-31"\n'))
    assert config.tasks.since == date(2022, 12, 31)


def test_examiner_assignment_defaults_to_reproduce(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL + '[[examiners]]\nagent = "codex"\n'))
    assert config.examiners[0].assignment == "reproduce"


def test_load_accepts_the_directory(repo: Path) -> None:
    write(repo, MINIMAL)
    assert load_config(repo).file == repo / "bugbout.toml"
    assert Config.load(repo).project.source == "src/pkg"


def test_unknown_agent_names_are_left_to_the_registry(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL + '[[contestants]]\nagent = "my-agent"\n'))
    assert config.contestants[0].name == "my-agent"
    assert config.contestants[0].vendor == "unknown"
    assert "command" in BUILTIN_FACTS


@pytest.mark.parametrize(
    ("agent", "model", "vendor"),
    [
        ("codex", "gpt-5", "openai"),
        ("mini-swe-agent", "openai/o3", "openai"),
        ("mini-swe-agent", "o4-mini", "openai"),
        ("command", "gpt-5.1-codex", "openai"),
        ("command", "claude-sonnet-4-5", "anthropic"),
        ("claude-code", "opus", "anthropic"),
        ("command", "haiku", "anthropic"),
        ("mini-swe-agent", "gemini/gemini-2.5-pro", "google"),
        ("mini-swe-agent", "ollama/qwen3-coder:30b", "alibaba"),
        ("mini-swe-agent", "ollama/llama3.1", "meta"),
        ("mini-swe-agent", "ollama/gemma3", "google"),
        ("mini-swe-agent", "ollama/qwq", "alibaba"),
        ("mini-swe-agent", "ollama/phi4", "microsoft"),
        ("codex", "gemma3:27b", "google"),
        ("mini-swe-agent", "mistral/devstral-small", "mistral"),
        ("mini-swe-agent", "codestral", "mistral"),
        ("mini-swe-agent", "deepseek/deepseek-chat", "deepseek"),
        ("codex", None, "openai"),
        ("claude-code", None, "anthropic"),
        ("gemini-cli", None, "google"),
        ("codex", "some-local-model", "openai"),
        ("mini-swe-agent", "some-local-model", "unknown"),
        ("command", None, "unknown"),
    ],
)
def test_vendor_guess(repo: Path, agent: str, model: str | None, vendor: str) -> None:
    """The vendor a contestant gets in bugbout.toml is the one its adapter runs under."""
    entry = f'[[contestants]]\nagent = "{agent}"\nname = "x"\n'
    entry += f'model = "{model}"\n' if model else ""
    entry += 'command = ["x"]\n' if agent == "command" else ""
    (contestant,) = load_config(write(repo, MINIMAL + entry)).contestants
    assert contestant.vendor == vendor
    (entrant,) = Bout(Project.load(repo)).entrants()
    assert entrant.agent.vendor == vendor


def test_cross_vendor_tells_local_models_of_different_makers_apart(repo: Path) -> None:
    """Served by the same Ollama, Google's, Alibaba's, Microsoft's and Meta's models are
    four vendors, so `cross-vendor` lets each one's tests vouch for the others' patches."""
    models = ("ollama/gemma3", "ollama/qwq", "ollama/phi4", "ollama/llama3.1")
    text = (
        MINIMAL
        + '[judge]\npolicy = "cross-vendor"\n'
        + "".join(
            f'[[contestants]]\nagent = "mini-swe-agent"\nmodel = "{model}"\n' for model in models
        )
    )
    write(repo, text)
    vendors = [entrant.agent.vendor for entrant in Bout(Project.load(repo)).entrants()]
    assert vendors == ["google", "alibaba", "microsoft", "meta"]


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/o/n.git",
        "git@github.com:o/n.git",
        "ssh://git@example.org/o/n",
        "git+ssh://h/x.git",
        "file:///srv/repo",
    ],
)
def test_a_git_url_is_not_checked_on_disk(repo: Path, url: str) -> None:
    assert is_git_url(url)
    config = load_config(write(repo, f'[project]\nsource = "lib/x"\nrepository = "{url}"\n'))
    assert config.project.repository_is_url
    assert config.project.repository_dir(config.root) is None


def test_decisions_and_review(repo: Path) -> None:
    text = MINIMAL + '[tasks]\ninclude = ["a"]\nexclude = ["b"]\n'
    tasks = load_config(write(repo, text)).tasks
    assert [tasks.decision(task) for task in ("a", "b", "c")] == ["accepted", "excluded", None]
    assert [tasks.is_raceable(task) for task in ("a", "b", "c")] == [True, False, True]
    reviewed = load_config(write(repo, text + "require-review = true\n")).tasks
    assert [reviewed.is_raceable(task) for task in ("a", "b", "c")] == [True, False, False]


def test_missing_file_suggests_init(repo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_config(repo / "bugbout.toml")
    assert not isinstance(caught.value, ConfigError)
    assert caught.value.message == "no bugbout.toml at bugbout.toml"
    assert "bugbout init" in str(caught.value)


# --- errors ---------------------------------------------------------------------------------


def test_unknown_key_with_suggestion(repo: Path) -> None:
    text = MINIMAL + '\n[judge]\n# the rule\npolcy = "strict"\n'
    assert problems(repo, text) == [
        "unknown key 'polcy' in [judge] at bugbout.toml:6; did you mean 'policy'?"
    ]


def test_a_key_in_the_wrong_table_says_where_it_belongs(repo: Path) -> None:
    text = MINIMAL + 'timeout = 60\ncontestants = []\n[judge]\nsandbox = "none"\n'
    assert problems(repo, text) == [
        "unknown key 'timeout' in [project] at bugbout.toml:3: it belongs in [run]",
        "unknown key 'contestants' in [project] at bugbout.toml:4: it belongs at the top "
        "level, above the first [table]",
        "unknown key 'sandbox' in [judge] at bugbout.toml:6: it belongs in [run]",
    ]


def test_underscore_key_suggests_the_dashed_one(repo: Path) -> None:
    assert problems(repo, MINIMAL + "[judge]\nrun_suite = false\n") == [
        "unknown key 'run_suite' in [judge] at bugbout.toml:4; did you mean 'run-suite'?"
    ]


def test_unknown_table_and_top_level_key(repo: Path) -> None:
    text = "verbose = true\n" + MINIMAL + '[judg]\npolicy = "strict"\n[[contestant]]\nagent = "x"\n'
    assert problems(repo, text) == [
        "unknown key 'verbose' at bugbout.toml:1",
        "unknown table [judg] at bugbout.toml:4; did you mean [judge]?",
        "unknown table [[contestant]] at bugbout.toml:6; did you mean [[contestants]]?",
    ]


def test_bad_enum_suggests_the_value(repo: Path) -> None:
    assert problems(repo, MINIMAL + '[judge]\npolicy = "majorty"\n') == [
        "invalid value for 'policy' in [judge] at bugbout.toml:4: must be one of 'majority', "
        "'unanimous', 'strict', 'cross-vendor', 'credible'; did you mean 'majority'?"
    ]


def test_wrong_types_read_plainly(repo: Path) -> None:
    text = MINIMAL + (
        'install-project = "yes"\n'
        "env = { PORT = 5432 }\n"
        "[run]\n"
        'timeout = "30m"\n'
        "[tasks]\n"
        "limit = 0\n"
        "since = 2023\n"
        'include = "pkg-1"\n'
    )
    lines = problems(repo, text)
    assert lines == [
        "invalid value for 'install-project' in [project] at bugbout.toml:3: must be true or false",
        "invalid value for 'env.PORT' in [project] at bugbout.toml:4: must be text in quotes",
        "invalid value for 'timeout' in [run] at bugbout.toml:6: "
        "must be a positive whole number of seconds",
        "invalid value for 'limit' in [tasks] at bugbout.toml:8: "
        "must be a whole number, at least 1",
        "invalid value for 'since' in [tasks] at bugbout.toml:9: "
        'must be a date such as "2023-01-01"',
        "invalid value for 'include' in [tasks] at bugbout.toml:10: "
        'must be a list, e.g. ["a", "b"]',
    ]
    assert not any("Input should" in line for line in lines)


def test_the_caps_on_a_patch_must_be_positive_counts(repo: Path) -> None:
    text = MINIMAL + '[run]\nmax-patch-files = 0\nmax-patch-bytes = "10 MB"\n'
    assert problems(repo, text) == [
        "invalid value for 'max-patch-files' in [run] at bugbout.toml:4: "
        "must be a positive whole number of files",
        "invalid value for 'max-patch-bytes' in [run] at bugbout.toml:5: "
        "must be a positive whole number of bytes",
    ]


def test_stopping_once_decided_is_off_and_its_level_a_chance(repo: Path) -> None:
    run = load_config(write(repo, MINIMAL)).run
    assert (run.stop_when_decided, run.decided_at) == (False, 0.05)
    text = MINIMAL + "[run]\nstop-when-decided = true\ndecided-at = 0.1\n"
    run = load_config(write(repo, text)).run
    assert (run.stop_when_decided, run.decided_at) == (True, 0.1)
    text = MINIMAL + '[run]\nstop-when-decided = "yes"\ndecided-at = 5\n'
    assert problems(repo, text) == [
        "invalid value for 'stop-when-decided' in [run] at bugbout.toml:4: must be true or false",
        "invalid value for 'decided-at' in [run] at bugbout.toml:5: "
        "must be a level between 0 and 1, such as 0.05",
    ]


def test_missing_source_points_at_the_table(repo: Path) -> None:
    assert problems(repo, '# config\n\n[project]\ntests = "tests"\n') == [
        "missing key 'source' in [project] at bugbout.toml:3: name the package directory, "
        'relative to the repository root, e.g. "src/mypkg"'
    ]


def test_missing_project_table_points_at_line_one(repo: Path) -> None:
    lines = problems(repo, '\n\n[judge]\npolicy = "strict"\n')
    assert lines[0].startswith("missing key 'source' in [project] at bugbout.toml:1")


def test_duplicate_names_across_tables(repo: Path) -> None:
    text = MINIMAL + (
        '[[contestants]]\nagent = "codex"\n\n'
        '[[contestants]]\nagent = "codex"\n\n'
        '[[examiners]]\nagent = "claude-code"\nname = "codex"\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'name' in [[contestants]] #2 at bugbout.toml:6: "
        "'codex' is already the name of [[contestants]] #1; give each agent its own name",
        "invalid value for 'name' in [[examiners]] #1 at bugbout.toml:11: "
        "'codex' is already the name of [[contestants]] #1; give each agent its own name",
    ]


def test_the_matrix_keeps_base_and_suite_for_itself(repo: Path) -> None:
    text = MINIMAL + (
        '[[contestants]]\nagent = "command"\nname = "base"\ncommand = ["fix"]\n\n'
        '[[examiners]]\nagent = "claude-code"\nname = "suite"\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'name' in [[contestants]] #1 at bugbout.toml:5: 'base' is "
        "already the name of the unfixed code in the cross-examination matrix; "
        "give each agent its own name",
        "invalid value for 'name' in [[examiners]] #1 at bugbout.toml:10: 'suite' is "
        "already the name of the repository's own tests in the cross-examination matrix; "
        "give each agent its own name",
    ]


def test_a_report_row_keeps_its_name(repo: Path) -> None:
    text = MINIMAL + (
        '[[contestants]]\nagent = "codex"\nname = "oracle"\n\n'
        '[[examiners]]\nagent = "claude-code"\nname = "Total"\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'name' in [[contestants]] #1 at bugbout.toml:5: 'oracle' is "
        "already the name of the report's row “Oracle (any patch right)”; "
        "give each agent its own name",
        "invalid value for 'name' in [[examiners]] #1 at bugbout.toml:9: 'Total' is "
        "already the name of the report's row “Total” of cost and tokens; "
        "give each agent its own name",
    ]


@pytest.mark.parametrize("name", ["judge", "Random", "abstained", "BASE", "Suite"])
def test_every_reserved_name_is_refused_in_any_case(repo: Path, name: str) -> None:
    text = MINIMAL + f'[[contestants]]\nagent = "codex"\nname = "{name}"\n'
    (problem,) = problems(repo, text)
    assert problem.startswith(
        f"invalid value for 'name' in [[contestants]] #1 at bugbout.toml:5: '{name}' is "
        "already the name of "
    )


@pytest.mark.parametrize("agent", sorted(BUILTIN_AGENTS))
def test_the_config_accepts_exactly_the_options_its_adapter_takes(repo: Path, agent: str) -> None:
    """Both read one description per agent; this keeps anyone from giving either its own."""
    options = BUILTIN_AGENTS[agent].options
    assert options == BUILTIN_FACTS[agent].options
    values = {option: '["x"]' if option == "command" else '"x"' for option in options}
    entry = f'[[contestants]]\nagent = "{agent}"\nname = "x"\nmodel = "m"\n'
    entry += "".join(f"{option} = {values[option]}\n" for option in sorted(options))
    load_config(write(repo, MINIMAL + entry))

    listed = ", ".join(sorted(options))
    line = 7 + len(options)
    assert problems(repo, MINIMAL + entry + "made-up = 1\n") == [
        f"unknown key 'made-up' in [[contestants]] #1 at bugbout.toml:{line}: "
        + (
            f"the {agent} agent's options are {listed}"
            if listed
            else f"the {agent} agent takes no options"
        )
    ]
    with pytest.raises(UsageError, match="no option 'made-up'"):
        BUILTIN_AGENTS[agent]("m", name="x", options={"made-up": 1})


def test_an_option_of_another_agent_is_refused_with_its_line(repo: Path) -> None:
    text = MINIMAL + (
        '[[contestants]]\nagent = "codex"\nbase_url = "http://localhost:8000/v1"\n'
        '[[contestants]]\nagent = "gemini-cli"\neffort = "high"\n'
        '[[contestants]]\nagent = "codex"\nname = "local"\nbase-url = "http://h/v1"\n'
    )
    assert problems(repo, text) == [
        "unknown key 'base_url' in [[contestants]] #1 at bugbout.toml:5; did you mean 'base-url'?",
        "unknown key 'effort' in [[contestants]] #2 at bugbout.toml:8: "
        "the gemini-cli agent takes no options",
    ]


def test_command_agent_needs_a_name_and_a_command(repo: Path) -> None:
    no_name = MINIMAL + '[[contestants]]\nagent = "command"\ncommand = ["x"]\n'
    assert problems(repo, no_name) == [
        "missing key 'name' in [[contestants]] #1 at bugbout.toml:3: a command agent has no "
        "type to be named after; give it a name"
    ]
    no_command = MINIMAL + '[[contestants]]\nagent = "command"\nname = "mine"\n'
    assert problems(repo, no_command) == [
        "missing key 'command' in [[contestants]] #1 at bugbout.toml:3: a command agent needs "
        'its command line as a list, e.g. ["my-agent", "{prompt_file}"]'
    ]
    empty = MINIMAL + '[[contestants]]\nagent = "command"\nname = "mine"\ncommand = []\n'
    assert problems(repo, empty) == [
        "invalid value for 'command' in [[contestants]] #1 at bugbout.toml:6: must be a "
        'non-empty list of strings, e.g. ["my-agent", "{prompt_file}"]'
    ]


def test_mini_swe_agent_needs_a_model(repo: Path) -> None:
    text = (
        MINIMAL
        + '\n[[contestants]]\nagent = "codex"\n\n[[contestants]]\nagent = "mini-swe-agent"\n'
    )
    assert problems(repo, text) == [
        "missing key 'model' in [[contestants]] #2 at bugbout.toml:7: mini-swe-agent needs "
        'a LiteLLM model, e.g. "ollama/qwen3-coder:30b"'
    ]


def test_assignment_only_for_examiners(repo: Path) -> None:
    text = MINIMAL + '[[contestants]]\nagent = "codex"\nassignment = "specify"\n'
    assert problems(repo, text) == [
        "invalid value for 'assignment' in [[contestants]] #1 at bugbout.toml:5: only "
        "[[examiners]] have an assignment; move this agent there or remove the key"
    ]


def test_misspelled_agent_and_option(repo: Path) -> None:
    text = MINIMAL + (
        '[[contestants]]\nagent = "claude"\nmodle = "sonnet"\n'
        '[[contestants]]\nagent = "mini-swe-agent"\nmodel = "m"\nstep_limit = 5\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'agent' in [[contestants]] #1 at bugbout.toml:4: 'claude' is not "
        "an agent; did you mean 'claude-code'?",
        "unknown key 'modle' in [[contestants]] #1 at bugbout.toml:5; did you mean 'model'?",
        "unknown key 'step_limit' in [[contestants]] #2 at bugbout.toml:9; "
        "did you mean 'step-limit'?",
    ]


def test_task_in_both_lists(repo: Path) -> None:
    text = (
        MINIMAL + '[tasks]\ninclude = ["pkg-1", "pkg-2"]\nexclude = [\n  "pkg-3",\n  "pkg-2",\n]\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'exclude[1]' in [tasks] at bugbout.toml:7: task 'pkg-2' is both "
        "included and excluded; keep it in one list"
    ]


def test_shapes_of_github_and_python(repo: Path) -> None:
    text = MINIMAL + 'github = "https://github.com/octo/widgets.git"\npython = 3.12\n'
    assert problems(repo, text) == [
        "invalid value for 'github' in [project] at bugbout.toml:3: must be a GitHub "
        "repository as owner/name, e.g. \"psf/requests\"; did you mean 'octo/widgets'?",
        "invalid value for 'python' in [project] at bugbout.toml:4: must be a Python "
        'version in quotes, e.g. "3.12"',
    ]
    assert problems(repo, MINIMAL + 'python = "3.x"\n') == [
        "invalid value for 'python' in [project] at bugbout.toml:3: must be a Python 3 "
        'version as major.minor, e.g. "3.12"'
    ]


def test_paths_are_checked_against_the_file_directory(repo: Path) -> None:
    text = (
        "[project]\n"
        'source = "src/nothere"\n'
        'interpreter = "bin/python"\n'
        'issues-file = "issues.json"\n'
    )
    assert problems(repo, text) == [
        f"invalid value for 'source' in [project] at bugbout.toml:2: no directory "
        f"'src/nothere' in {repo}",
        f"invalid value for 'interpreter' in [project] at bugbout.toml:3: no Python at "
        f"{repo / 'bin' / 'python'}",
        f"invalid value for 'issues-file' in [project] at bugbout.toml:4: no file at "
        f"{repo / 'issues.json'}",
    ]
    assert problems(repo, MINIMAL + 'repository = "../gone"\n') == [
        f"invalid value for 'repository' in [project] at bugbout.toml:3: no directory at "
        f"{repo / '..' / 'gone'}"
    ]


def test_source_must_be_inside_the_repository(repo: Path) -> None:
    assert problems(repo, '[project]\nsource = "/abs/pkg"\n') == [
        "invalid value for 'source' in [project] at bugbout.toml:2: must be a directory "
        'inside the repository, e.g. "src/mypkg"'
    ]


def test_all_problems_are_reported_together(repo: Path) -> None:
    text = (
        '[project]\nsource = "src/pkg"\n'
        '[run]\ntimeout = -1\nsandbox = "docker"\n'
        '[judge]\npolicy = "best"\n'
        '[[contestants]]\nagent = "mini-swe-agent"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(write(repo, text))
    error = caught.value
    assert [(p.key, p.line) for p in error.problems] == [
        ("run.timeout", 4),
        ("run.sandbox", 5),
        ("judge.policy", 7),
        ("contestants[0].model", 8),
    ]
    assert error.exit_code == 2
    assert isinstance(error, UsageError)
    assert {p.file for p in error.problems} == {repo / "bugbout.toml"}


def test_toml_syntax_error_names_line_and_column(repo: Path) -> None:
    assert problems(repo, MINIMAL + "[judge]\npolicy = majority\n") == [
        "invalid TOML at bugbout.toml:4:10: unexpected character: 'm'; text goes in quotes, "
        'e.g. "majority"'
    ]
    with pytest.raises(ConfigError) as caught:
        load_config(write(repo, MINIMAL + '[judge]\npolicy = "a"\npolicy = "b"\n'))
    assert str(caught.value) == "invalid TOML at bugbout.toml:5: 'policy' is defined twice"
    (problem,) = caught.value.problems
    assert (problem.kind, problem.line, problem.column) == ("syntax", 5, None)
    assert problems(repo, "[project]\n[project]\n") == [
        "invalid TOML at bugbout.toml:2:1: 'project' is defined twice"
    ]


def test_path_outside_the_working_directory_is_shown_whole(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    path = elsewhere / "bugbout.toml"
    path.write_text("[project]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"missing key 'source' in [project] at {path}:1")
    assert os.getcwd() == str(repo)


# --- finding lines ------------------------------------------------------------------------


def test_key_lines_follow_the_structure() -> None:
    text = """\
# leading comment

top = 1
[project]   # trailing comment
source = "src/x"  # with # inside "quotes"
"quoted key" = 'literal [not a table]'
dotted.inner = 2
doc = \"\"\"
[not-a-table]
key = 1
\"\"\"
list = [
  "a",   # one

  { name = "b", deep = { x = 1 } },
]

[ run . quotas ]
codex = 2

[[contestants]]
agent = "codex"
model-kwargs = { temperature = "0" }

[contestants.extra]
k = 1

[[contestants]]
agent = 'claude-code'
"""
    lines = key_lines(text)
    assert lines[("top",)] == 3
    assert lines[("project",)] == 4
    assert lines[("project", "source")] == 5
    assert lines[("project", "quoted key")] == 6
    assert lines[("project", "dotted", "inner")] == 7
    assert lines[("project", "doc")] == 8
    assert ("not-a-table",) not in lines and ("project", "key") not in lines
    assert lines[("project", "list")] == 12
    assert lines[("project", "list", 0)] == 13
    assert lines[("project", "list", 1)] == 15
    assert lines[("project", "list", 1, "deep", "x")] == 15
    assert lines[("run", "quotas")] == 18
    assert lines[("run", "quotas", "codex")] == 19
    assert lines[("contestants",)] == 21
    assert lines[("contestants", 0)] == 21
    assert lines[("contestants", 0, "model-kwargs", "temperature")] == 23
    assert lines[("contestants", 0, "extra", "k")] == 26
    assert lines[("contestants", 1)] == 28
    assert lines[("contestants", 1, "agent")] == 29


def test_key_lines_inline_quotas(repo: Path) -> None:
    text = MINIMAL + "\n[run]\nquotas = {\n codex = 2, claude-code = 0 }\n"
    assert problems(repo, text) == [
        "invalid value for 'quotas.claude-code' in [run] at bugbout.toml:6: "
        "must be a whole number of runs at once, at least 1"
    ]


def test_what_agents_see_is_chosen_for_the_bout_and_per_agent(repo: Path) -> None:
    text = (
        MINIMAL
        + '[run]\nagent-view = "minimal"\n'
        + '[[contestants]]\nagent = "codex"\nview = "host"\n'
        + '[[contestants]]\nagent = "gemini-cli"\n'
        + '[[examiners]]\nagent = "claude-code"\nview = "minimal"\n'
    )
    config = load_config(write(repo, text))
    assert config.run.agent_view == "minimal"
    assert [c.view for c in config.agents] == ["host", None, "minimal"]
    assert all("view" not in c.options for c in config.agents)


def test_a_view_that_does_not_exist_is_reported_with_its_line(repo: Path) -> None:
    text = (
        MINIMAL + '[run]\nagent-view = "strict"\n[[contestants]]\nagent = "codex"\nview = "none"\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'agent-view' in [run] at bugbout.toml:4: must be one of 'host', "
        "'minimal'",
        "invalid value for 'view' in [[contestants]] #1 at bugbout.toml:7: must be one of "
        "'host', 'minimal'",
    ]


def test_reruns_is_a_whole_number_of_runs_of_the_fix(repo: Path) -> None:
    assert problems(repo, MINIMAL + "[tasks]\nreruns = 0\n") == [
        "invalid value for 'reruns' in [tasks] at bugbout.toml:4: "
        "must be a whole number from 1 to 20"
    ]
    assert problems(repo, MINIMAL + '[tasks]\nreruns = "twice"\n') == [
        "invalid value for 'reruns' in [tasks] at bugbout.toml:4: "
        "must be a whole number from 1 to 20"
    ]


def test_wait_for_quota_is_a_duration(repo: Path) -> None:
    assert load_config(write(repo, MINIMAL)).run.wait_for_quota is None
    for text, wait in [('"6h"', timedelta(hours=6)), ('"90m"', timedelta(minutes=90)),
                       ('"45s"', timedelta(seconds=45)),
                       ('"1h30m"', timedelta(hours=1, minutes=30))]:  # fmt: skip
        config = load_config(write(repo, MINIMAL + f"[run]\nwait-for-quota = {text}\n"))
        assert config.run.wait_for_quota == wait


@pytest.mark.parametrize("value", ['"6 hours"', "6", '"0s"', '"h"', '""', "true"])
def test_a_wait_for_quota_that_is_no_duration_names_its_line(repo: Path, value: str) -> None:
    (line,) = problems(repo, MINIMAL + f"[run]\nwait-for-quota = {value}\n")
    assert line.startswith("invalid value for 'wait-for-quota' in [run] at bugbout.toml:4: "
                           'must be a duration such as "6h"'), line  # fmt: skip


@pytest.mark.parametrize("value", ['"tcp://10.0.0.5:8786"', '"10.0.0.5:8786"', '"tls://s:8786"'])
def test_a_cluster_is_a_schedulers_address(repo: Path, value: str) -> None:
    assert load_config(write(repo, MINIMAL)).run.cluster is None
    config = load_config(write(repo, MINIMAL + f"[run]\ncluster = {value}\n"))
    assert config.run.cluster == value.strip('"')


@pytest.mark.parametrize("value", ['"tcp://a b:8786"', '"tcp://host:port"', "8786"])
def test_a_cluster_that_is_no_address_names_its_line(repo: Path, value: str) -> None:
    (line,) = problems(repo, MINIMAL + f"[run]\ncluster = {value}\n")
    assert line.startswith("invalid value for 'cluster' in [run] at bugbout.toml:4: "), line
    assert ("tcp://10.0.0.5:8786" if value.startswith('"') else "text in quotes") in line


def test_an_empty_kinds_mines_nothing_and_needs_the_lite_set(repo: Path) -> None:
    assert problems(repo, MINIMAL + "\n[tasks]\nkinds = []\n") == [
        "invalid value for 'kinds' in [tasks] at bugbout.toml:5: is empty, so nothing is "
        'mined: list "bug", "env" or both, or set [env] lite = true to race the Lite set alone'
    ]
    config = load_config(write(repo, MINIMAL + "\n[tasks]\nkinds = []\n\n[env]\nlite = true\n"))
    assert config.tasks.kinds == [] and config.env.lite
