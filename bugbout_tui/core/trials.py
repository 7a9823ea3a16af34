"""How a repeated trial is named: one spelling for the race, the judge and the report.

A contestant with `trials = N` races as N entrants. Trial 1 keeps the contestant's own
name, so a bout of one trial stores exactly what it always did; trial k ≥ 2 is named
`name#k`. Everything that must see the agent behind a trial (the judge, which counts an
agent's trials as one author; the report, which pools them) reads the name back here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "TRIAL_SUFFIX",
    "agent_of",
    "trial_label",
    "trial_label_among",
    "trial_name",
    "trial_number",
]

TRIAL_SUFFIX = re.compile(r"#(\d+)$")
"""The end of a name that makes it a trial; an agent's own name may not end so."""


def trial_name(agent: str, trial: int) -> str:
    """The entrant name of `agent`'s trial number `trial` (1 for the first)."""
    if trial < 1:
        raise ValueError(f"trials are numbered from 1, got {trial}")
    return agent if trial == 1 else f"{agent}#{trial}"


def agent_of(name: str) -> str:
    """The agent behind an entrant name: `codex#2` → `codex`; a plain name is itself."""
    return TRIAL_SUFFIX.sub("", name)


def trial_number(name: str) -> int:
    """Which trial an entrant name is: `codex#2` → 2; a plain name is trial 1."""
    match = TRIAL_SUFFIX.search(name)
    return 1 if match is None else int(match.group(1))


def trial_label(name: str) -> str:
    """The name as a person reads it: `careful#2` → `careful #2`; a plain name as is."""
    match = TRIAL_SUFFIX.search(name)
    return name if match is None else f"{agent_of(name)} #{match.group(1)}"


def trial_label_among(name: str, names: Iterable[str]) -> str:
    """`name` as a person reads it beside `names` (the patches of one task): with its
    trial number when its agent has more than one trial there (`careful #1`,
    `careful #2`), as is when it is the agent's only one."""
    agent = agent_of(name)
    if sum(agent_of(other) == agent for other in set(names) | {name}) < 2:
        return name
    return f"{agent} #{trial_number(name)}"
