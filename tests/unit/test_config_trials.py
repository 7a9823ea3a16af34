"""`trials`: how many independent attempts each contestant makes on each task."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_config import MINIMAL, problems, write

from bugbout_tui.core.config import load_config
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with its package, as the working directory."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


CONTESTANTS = '[[contestants]]\nagent = "codex"\n\n[[contestants]]\nagent = "claude-code"\n'


def test_one_trial_unless_asked(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL + CONTESTANTS))
    assert config.run.trials == 1
    assert [config.trials_of(c) for c in config.contestants] == [1, 1]


def test_a_contestant_overrides_the_bout(repo: Path) -> None:
    text = (
        MINIMAL
        + "[run]\ntrials = 3\n"
        + CONTESTANTS.replace('agent = "claude-code"\n', 'agent = "claude-code"\ntrials = 5\n')
    )
    config = load_config(write(repo, text))
    assert [config.trials_of(c) for c in config.contestants] == [3, 5]


def test_trials_must_be_whole_and_at_least_one(repo: Path) -> None:
    text = (
        MINIMAL
        + "[run]\ntrials = 0\n"
        + CONTESTANTS.replace('agent = "codex"\n', 'agent = "codex"\ntrials = 2.5\n')
    )
    assert problems(repo, text) == [
        "invalid value for 'trials' in [run] at bugbout.toml:4: must be a whole number of "
        "trials, at least 1",
        "invalid value for 'trials' in [[contestants]] #1 at bugbout.toml:7: must be a "
        "whole number of trials, at least 1",
    ]


def test_examiners_take_no_trials(repo: Path) -> None:
    text = MINIMAL + '[[examiners]]\nagent = "codex"\ntrials = 3\n'
    assert problems(repo, text) == [
        "invalid value for 'trials' in [[examiners]] #1 at bugbout.toml:5: examiners write "
        "their tests once per task and take no trials; trials are for [[contestants]], so "
        "remove the key"
    ]


@pytest.mark.parametrize("table", ["contestants", "examiners"])
def test_a_name_may_not_read_as_a_trial(repo: Path, table: str) -> None:
    text = MINIMAL + f'[[{table}]]\nagent = "codex"\nname = "codex#2"\n'
    assert problems(repo, text) == [
        f"invalid value for 'name' in [[{table}]] #1 at bugbout.toml:5: 'codex#2' ends like "
        "a repeated trial (`#2` is a contestant's second trial); choose a name that does "
        "not end in # and a number"
    ]


def test_a_name_with_a_hash_inside_is_fine(repo: Path) -> None:
    config = load_config(write(repo, MINIMAL + '[[contestants]]\nagent = "codex"\nname = "c#2b"\n'))
    assert config.contestants[0].name == "c#2b"


def test_each_trial_is_an_entrant_sharing_its_agent(repo: Path) -> None:
    """Trial 1 keeps the plain name, trial k is `name#k`; all share model, vendor, quota
    and options, and the examiner races once."""
    text = (
        MINIMAL
        + "[run]\ntrials = 2\n"
        + '[[contestants]]\nagent = "codex"\nmodel = "gpt-5"\n'
        + 'reasoning-effort = "high"\ntrials = 3\n'
        + '[[contestants]]\nagent = "claude-code"\n'
        + '[[examiners]]\nagent = "gemini-cli"\n'
    )
    write(repo, text)
    entrants = Bout(Project.load(repo)).entrants()
    assert [(e.agent.name, e.role) for e in entrants] == [
        ("codex/gpt-5", "contestant"),
        ("codex/gpt-5#2", "contestant"),
        ("codex/gpt-5#3", "contestant"),
        ("claude-code", "contestant"),
        ("claude-code#2", "contestant"),
        ("gemini-cli", "examiner"),
    ]
    codex = [e.agent for e in entrants[:3]]
    assert {(a.model, a.vendor, a.quota, type(a)) for a in codex} == {
        ("gpt-5", "openai", "codex", type(codex[0]))
    }
    assert all(a.settings == {"reasoning-effort": "high"} for a in codex)
