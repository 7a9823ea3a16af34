"""Editing bugbout.toml keeps everything the user wrote that the edit did not touch."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from bugbout_tui.core.config import ConfigError, load_config
from bugbout_tui.core.config_doc import ConfigDocument
from bugbout_tui.core.errors import UsageError

COMMENTED = """\
# The bout for our package.
#   Keep this file in review with the code.

[project]
source = "src/pkg"   # the package
tests   =   "tests"
pytest-args = [
    "-p", "no:randomly",  # order matters here
]

# ---- judging --------------------------------------------------------------
[judge]
policy = "majority"    # we trust a majority
# run-suite = false

# How agents run.
[run]
timeout = 900
quotas = { codex = 2 }

# Contestants below.
[[contestants]]
agent = "codex"   # the plan we pay for
reasoning-effort = "high"

# A second opinion.
[[contestants]]
agent = "claude-code"
model = "sonnet"

# Examiners write tests only.
[[examiners]]
agent = "gemini-cli"
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def changed_lines(before: str, after: str) -> list[str]:
    """The diff of two texts as '-'/'+' lines, without context."""
    return [
        line
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if line.startswith(("-", "+"))
    ]


def saved(repo: Path, text: str) -> tuple[Path, ConfigDocument]:
    path = repo / "bugbout.toml"
    path.write_text(text)
    return path, ConfigDocument.load(path)


def test_changing_one_key_changes_only_its_line(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    assert not document.modified
    document.set(("judge", "policy"), "strict")
    assert document.modified
    config = document.save()
    assert config.judge.policy == "strict"
    assert changed_lines(COMMENTED, path.read_text()) == [
        '- policy = "majority"    # we trust a majority',
        '+ policy = "strict"    # we trust a majority',
    ]
    assert not document.modified
    assert load_config(path).judge.policy == "strict"


def test_nested_and_array_table_keys(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set(("run", "quotas", "codex"), 3)
    document.set(("contestants", 1, "model"), "opus")
    document.save()
    assert changed_lines(COMMENTED, path.read_text()) == [
        "- quotas = { codex = 2 }",
        "+ quotas = { codex = 3 }",
        '- model = "sonnet"',
        '+ model = "opus"',
    ]
    config = load_config(path)
    assert config.run.capacity("codex") == 3
    assert config.contestants[1].name == "claude-code/opus"


def test_a_new_key_goes_after_the_last_key_not_after_the_next_comment(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set(("judge", "run-suite"), False)
    document.set(("contestants", 0, "model"), "gpt-5-codex")
    document.save()
    text = path.read_text()
    assert changed_lines(COMMENTED, text) == ["+ run-suite = false", '+ model = "gpt-5-codex"']
    assert 'policy = "majority"    # we trust a majority\nrun-suite = false\n# run-suite' in text
    assert 'reasoning-effort = "high"\nmodel = "gpt-5-codex"\n\n# A second opinion.' in text


def test_new_tables_and_removed_keys(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set(("tasks", "limit"), 5)
    document.set(("run", "timeout"), None)
    document.set(("run", "sandbox"), "none")
    assert document.get(("tasks", "limit")) == 5
    assert document.get(("run", "timeout")) is None
    assert document.get(("contestants", 1, "model")) == "sonnet"
    assert document.get(("contestants", 5, "model")) is None
    config = document.save()
    assert (config.tasks.limit, config.run.timeout, config.run.sandbox) == (5, 1800, "none")
    assert changed_lines(COMMENTED, path.read_text()) == [
        "- timeout = 900",
        '+ sandbox = "none"',
        "+ ",
        "+ [tasks]",
        "+ limit = 5",
    ]


def test_decision_in_a_file_without_tasks_table(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set_task_decision("pkg-12", "accepted")
    document.set_task_decision("pkg-7", "excluded")
    document.save()
    text = path.read_text()
    assert text.startswith(COMMENTED)
    assert text[len(COMMENTED) :] == '\n[tasks]\ninclude = ["pkg-12"]\nexclude = ["pkg-7"]\n'
    tasks = load_config(path).tasks
    assert tasks.decision("pkg-12") == "accepted"
    assert tasks.decision("pkg-7") == "excluded"


def test_moving_and_clearing_decisions(repo: Path) -> None:
    text = """\
[project]
source = "src/pkg"

[tasks]
limit = 10  # enough
include = [
    "pkg-1",  # checked by hand
    "pkg-2",
]
# reviewed on Monday

[judge]
policy = "strict"
"""
    path, document = saved(repo, text)
    document.set_task_decision("pkg-2", "excluded")
    document.save()
    assert changed_lines(text, path.read_text()) == ['-     "pkg-2",', '+ exclude = ["pkg-2"]']
    assert load_config(path).tasks.decision("pkg-2") == "excluded"

    document.set_task_decision("pkg-2", None)
    document.set_task_decision("pkg-1", "excluded")
    document.save()
    after = path.read_text()
    assert "include" not in after
    assert load_config(path).tasks.exclude == ["pkg-1"]
    assert 'limit = 10  # enough\nexclude = ["pkg-1"]\n# reviewed on Monday\n' in after

    document.set_task_decision("pkg-1", None)
    document.set_task_decision("pkg-9", None)
    document.save()
    assert changed_lines(text, path.read_text()) == [
        "- include = [",
        '-     "pkg-1",  # checked by hand',
        '-     "pkg-2",',
        "- ]",
    ]


def test_undoing_every_decision_leaves_no_empty_tasks_table(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set_task_decision("pkg-12", "accepted")
    document.set_task_decision("pkg-7", "excluded")
    document.save()
    document.set_task_decision("pkg-12", None)
    document.set_task_decision("pkg-7", None)
    document.save()
    assert path.read_text() == COMMENTED


def test_a_tasks_table_with_a_comment_stays_when_its_decisions_go(repo: Path) -> None:
    text = '[project]\nsource = "src/pkg"\n\n[tasks]\n# reviewed by hand\ninclude = ["a"]\n'
    path, document = saved(repo, text)
    document.set_task_decision("a", None)
    document.save()
    assert path.read_text() == '[project]\nsource = "src/pkg"\n\n[tasks]\n# reviewed by hand\n'


def test_accepting_twice_adds_once(repo: Path) -> None:
    _, document = saved(repo, '[project]\nsource = "src/pkg"\n[tasks]\ninclude = ["a"]\n')
    document.set_task_decision("a", "accepted")
    document.set_task_decision("b", "accepted")
    assert document.save().tasks.include == ["a", "b"]


def test_adding_an_agent_keeps_the_next_sections_comment(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    index = document.add_agent("contestants", {"agent": "mini-swe-agent", "model": "ollama/x"})
    assert index == 2
    document.save()
    text = path.read_text()
    assert sorted(changed_lines(COMMENTED, text)) == [
        "+ ",
        "+ [[contestants]]",
        '+ agent = "mini-swe-agent"',
        '+ model = "ollama/x"',
    ]
    assert 'model = "ollama/x"\n\n# Examiners write tests only.\n[[examiners]]' in text
    assert [agent.name for agent in load_config(path).contestants][-1] == (
        "mini-swe-agent/ollama/x"
    )


def test_adding_the_first_examiner(repo: Path) -> None:
    text = '[project]\nsource = "src/pkg"\n# the end'
    path, document = saved(repo, text)
    assert document.add_agent("examiners", {"agent": "codex", "assignment": "specify"}) == 0
    config = document.save()
    assert config.examiners[0].assignment == "specify"
    assert path.read_text() == (
        text + '\n\n[[examiners]]\nagent = "codex"\nassignment = "specify"\n'
    )


def test_removing_an_agent_keeps_comments_for_what_follows(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.remove_agent("contestants", 1)
    document.save()
    assert changed_lines(COMMENTED, path.read_text()) == [
        "- # A second opinion.",
        "- [[contestants]]",
        '- agent = "claude-code"',
        '- model = "sonnet"',
        "- ",
    ]
    document.remove_agent("examiners", 0)
    config = document.save()
    assert config.examiners == []
    assert "[[examiners]]" not in path.read_text()
    with pytest.raises(UsageError, match=r"has no \[\[contestants\]\] #5"):
        document.remove_agent("contestants", 4)


def test_removing_the_first_or_a_middle_agent(repo: Path) -> None:
    text = """\
[project]
source = "src/pkg"

# Contestants:
[[contestants]]
agent = "codex"

# second
[[contestants]]
agent = "claude-code"

# third
[[contestants]]
agent = "gemini-cli"
"""
    path, document = saved(repo, text)
    document.remove_agent("contestants", 1)
    document.save()
    assert changed_lines(text, path.read_text()) == [
        "- # second",
        "- [[contestants]]",
        '- agent = "claude-code"',
        "- ",
    ]
    document.remove_agent("contestants", 0)
    assert [agent.name for agent in document.save().contestants] == ["gemini-cli"]
    assert path.read_text() == (
        '[project]\nsource = "src/pkg"\n\n# Contestants:\n\n# third\n'
        '[[contestants]]\nagent = "gemini-cli"\n'
    )


def test_save_refuses_an_invalid_document(repo: Path) -> None:
    path, document = saved(repo, COMMENTED)
    document.set(("run", "timeout"), 0)
    document.set(("judge", "policy"), "best")
    assert [problem.key for problem in document.problems()] == ["judge.policy", "run.timeout"]
    with pytest.raises(ConfigError) as caught:
        document.save()
    assert "at bugbout.toml:13" in str(caught.value)
    assert path.read_text() == COMMENTED
    assert document.modified


def test_a_broken_file_can_be_opened_and_repaired(repo: Path) -> None:
    _, document = saved(repo, '[project]\nsource = "src/pkg"\n[judge]\npolcy = "strict"\n')
    assert [problem.key for problem in document.problems()] == ["judge.polcy"]
    document.set(("judge", "polcy"), None)
    document.set(("judge", "policy"), "strict")
    assert document.problems() == []
    assert document.save().judge.policy == "strict"


def test_paths_that_are_not_tables_are_refused(repo: Path) -> None:
    _, document = saved(repo, COMMENTED)
    with pytest.raises(UsageError, match=r"'judge\.policy' in bugbout\.toml is not a table"):
        document.set(("judge", "policy", "x"), 1)
    with pytest.raises(UsageError, match="no such"):
        document.set(("contestants", 9, "model"), "x")
    assert document.text == COMMENTED


def test_a_table_added_after_its_sibling_keeps_the_next_sections_comment(repo: Path) -> None:
    before = COMMENTED.replace(
        "\n# A second opinion.",
        '\n[prices."gpt-5"]  # our rate\ninput = 1.0\noutput = 8.0\n\n# A second opinion.',
        1,
    )
    assert before != COMMENTED
    path, document = saved(repo, before)
    document.set(("prices", "ollama/x"), {"input": 0, "output": 0})
    document.save()
    text = path.read_text()
    assert 'output = 8.0\n\n[prices."ollama/x"]\ninput = 0\noutput = 0\n\n# A second' in text
    assert load_config(path).price_table().price("ollama/x") is not None
