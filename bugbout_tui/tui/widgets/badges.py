"""How outcomes look everywhere in the app: one word, one colour, one symbol each."""

from __future__ import annotations

from rich.text import Text

PHASES: dict[str, tuple[str, str, str]] = {
    "queued": ("·", "queued", "dim"),
    "running": ("▶", "running", "bold yellow"),
    "interrupted": ("■", "stopped with the run", "yellow"),
    "finished": ("✓", "finished", "green"),
    "no-change": ("∅", "no change", "yellow"),
    "oversized": ("▣", "oversized", "red"),
    "timeout": ("◷", "timeout", "red"),
    "crashed": ("✗", "crashed", "red"),
    "quota": ("‖", "quota", "magenta"),
    "skipped": ("-", "skipped", "dim"),
}
"""Attempt phase → (symbol, word, style)."""

OUTCOME_STYLES: dict[str, str] = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "skipped": "dim",
    "xfailed": "yellow",
    "uncollected": "magenta",
}
"""A test's outcome on a tree → its colour."""

RESOLUTION_STYLES: dict[str, str] = {
    "resolved": "green",
    "fixed-but-broke": "yellow",
    "wrong-fix": "red",
    "no-fix": "dim",
    "quota": "magenta",
}


def phase_badge(phase: str) -> Text:
    symbol, word, style = PHASES.get(phase, ("?", phase, ""))
    return Text(f"{symbol} {word}", style=style)


def phase_symbol(phase: str) -> Text:
    symbol, _, style = PHASES.get(phase, ("?", phase, ""))
    return Text(symbol, style=style)


def outcome_text(outcome: str | None) -> Text:
    if outcome is None:
        return Text("not run", style="dim")
    return Text(outcome, style=OUTCOME_STYLES.get(outcome, ""))


def resolution_text(status: str | None) -> Text:
    if status is None:
        return Text("not scored", style="dim")
    return Text(status, style=RESOLUTION_STYLES.get(status, ""))


def tokens_text(input_tokens: int | None, output_tokens: int | None) -> str:
    """`12.3k in / 4.1k out`, or empty when the agent reported nothing."""
    if input_tokens is None and output_tokens is None:
        return ""
    return f"{_count(input_tokens)} in / {_count(output_tokens)} out"


def _count(value: int | None) -> str:
    if value is None:
        return "?"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def clock_text(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` past an hour."""
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
