"""The estimate before a race, as `bugbout run --estimate`, the board and the TUI show it.

Agent names come from bugbout.toml and lanes from it too, but a name may hold anything
a person typed: every line goes through `inert_line`, and tables hold `Text`.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from bugbout_tui.core import look
from bugbout_tui.core.estimate import AgentEstimate, Estimate
from bugbout_tui.core.prices import usd
from bugbout_tui.core.text import inert_line


def estimate_summary(estimate: Estimate) -> str:
    """One line: `12 attempts on 4 tasks · about $3.10 · about 1 h 10 m`."""
    parts = [
        f"{look.plural(estimate.attempts, 'attempt')} to run on "
        f"{look.plural(estimate.tasks, 'task')}"
    ]
    cost = estimate.cost_usd
    plan = any(a.billing == "plan" and a.attempts for a in estimate.agents)
    if cost is not None:
        parts.append(f"about {usd(cost)}" + (" plus plan use" if plan else ""))
    elif plan:
        parts.append("on plans")
    if estimate.attempts:
        parts.append(f"about {look.duration(estimate.seconds)}")
    return " · ".join(parts)


def agent_line(agent: AgentEstimate) -> str:
    """`codex: 8 attempts, 1.0M tokens each, $0.31 each (mean of 5 past attempts)`."""
    each = (
        f"{agent.tokens_shown_each()} tokens"
        if agent.tokens_each is not None
        else ("tokens not reported")
    )
    cost = "plan" if agent.billing == "plan" else usd(agent.cost_each)
    basis = (
        f"mean of {look.plural(agent.history, 'past attempt')}"
        if agent.basis == "history"
        else f"{agent.agent} default"
    )
    stored = f", {agent.stored} stored" if agent.stored else ""
    return inert_line(
        f"{agent.name}: {look.plural(agent.attempts, 'attempt')}{stored}; each {each}, "
        f"{cost}, {look.duration(agent.seconds_each)} ({basis})"
    )


def estimate_lines(estimate: Estimate) -> list[str]:
    """The estimate as plain lines: the summary, one per agent, lanes, then notes."""
    lines = [f"estimate: {estimate_summary(estimate)}"]
    lines += [f"  {agent_line(agent)}" for agent in estimate.agents]
    for lane in estimate.lanes:
        if lane.attempts:
            lines.append(
                inert_line(
                    f"  lane {lane.quota}: {look.plural(lane.attempts, 'attempt')} at "
                    f"{lane.capacity} at once, about {look.duration(lane.seconds)}"
                )
            )
    lines += [f"  note: {inert_line(note)}" for note in estimate.notes]
    return lines


def estimate_table(estimate: Estimate) -> RenderableType:
    """The estimate as `bugbout run --estimate` prints it."""
    table = Table(box=None, pad_edge=False)
    table.add_column("Agent", no_wrap=True)
    table.add_column("Lane", no_wrap=True)
    table.add_column("Attempts", justify="right")
    table.add_column("Stored", justify="right")
    table.add_column("Tokens", justify="right")
    table.add_column("Cost", justify="right")
    table.add_column("Each from")
    for agent in estimate.agents:
        table.add_row(
            Text(inert_line(agent.name)),
            Text(inert_line(agent.quota)),
            str(agent.attempts),
            str(agent.stored),
            agent.tokens_shown(),
            agent.cost_shown(),
            f"{look.plural(agent.history, 'past attempt')}"
            if agent.basis == "history"
            else f"{agent.agent} default",
        )
    lanes = Table(box=None, pad_edge=False)
    lanes.add_column("Lane", no_wrap=True)
    lanes.add_column("Attempts", justify="right")
    lanes.add_column("At once", justify="right")
    lanes.add_column("Wall time", justify="right")
    for lane in estimate.lanes:
        lanes.add_row(
            Text(inert_line(lane.quota)),
            str(lane.attempts),
            str(lane.capacity),
            look.duration(lane.seconds),
        )
    parts: list[RenderableType] = [
        Text(f"Estimate: {estimate_summary(estimate)}", style="bold"),
        table,
        Text(),
        lanes,
    ]
    for note in estimate.notes:
        parts.append(Text(f"note: {inert_line(note)}", style="dim"))
    return Group(*parts)
