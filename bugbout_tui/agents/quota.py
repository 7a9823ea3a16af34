"""Telling a usage-limit stop apart from every other way an agent run can fail.

A run that ends on a plan's usage limit is not the agent's fault and is worth retrying
once the limit resets, so the engine marks it `quota` instead of counting it as a failed
fix. Each agent words that stop differently, and the wording drifts between releases
(Codex switched to a typographic apostrophe, Claude Code rewrote its message twice), so
the patterns are kept together here, next to the texts they were written against.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

CODEX_LIMIT = re.compile(
    r"You[’']ve hit your usage limit"
    r"|Quota exceeded\. Check your plan"
    r"|To use Codex with your ChatGPT plan, upgrade"
)
"""Codex's `UsageLimitReachedError` texts (every plan), API-key quota and the free-plan refusal."""

CLAUDE_LIMIT = re.compile(
    r"hit your (?:\w+ )?limit|usage limit reached|out of extra usage", re.IGNORECASE
)
"""Claude Code 2.x ("You've hit your limit · resets 4pm", "… weekly limit", "You're out of
extra usage") and 1.0.x ("Claude AI usage limit reached|<epoch>")."""

GEMINI_LIMIT = re.compile(
    r"RESOURCE_EXHAUSTED|TerminalQuotaError|exhausted your (?:daily quota|capacity)"
    r"|exceeded your current quota|Resource has been exhausted|Usage limit reached",
    re.IGNORECASE,
)
"""Gemini CLI's quota classes and the API texts behind them."""

GEMINI_NOT_A_LIMIT = re.compile(r"Context window will overflow", re.IGNORECASE)
"""Gemini reports an overfull context as RESOURCE_EXHAUSTED too; that is no usage limit."""

LITELLM_RATE_LIMITS = frozenset({"RateLimitError"})
"""Exception class names that mini-swe-agent records as its exit status on a rate limit."""

ANY_LIMIT = re.compile(
    "|".join(
        [
            CODEX_LIMIT.pattern,
            CLAUDE_LIMIT.pattern,
            GEMINI_LIMIT.pattern,
            r"rate limited you",  # aider
            r"RateLimitError",
            r"insufficient_quota",
            r"quota (?:exceeded|exhausted)",
        ]
    ),
    re.IGNORECASE,
)
"""Every known usage-limit text, for agents that bugbout only knows by their output."""


def find_limit(
    texts: Iterable[str], pattern: re.Pattern[str], *, unless: re.Pattern[str] | None = None
) -> str | None:
    """The last text that carries a usage-limit message, trimmed to the line that says so.

    Texts are searched newest first, so an agent that hit a limit, waited and recovered
    is judged by how it ended; `unless` rules out look-alikes (Gemini's context overflow).
    """
    for text in reversed(list(texts)):
        for line in reversed(text.splitlines()):
            if pattern.search(line) and not (unless is not None and unless.search(line)):
                return line.strip()
    return None


_EPOCH = re.compile(r"usage limit reached\|(\d{9,11})\b", re.IGNORECASE)
"""Claude Code 1.0.x: `Claude AI usage limit reached|<epoch seconds>`."""
_IN = re.compile(
    r"(?:try again|resets?)\s+in\s+((?:\d+\s*(?:days?|hours?|hrs?|h|minutes?|mins?|m|"
    r"seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)",
    re.IGNORECASE,
)
"""A wait: "try again in 3 hours", "resets in 2h 13m"."""
_AFTER = re.compile(
    r"(?:reset after|retry in|retry after)\s+((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)(?![A-Za-z])",
    re.IGNORECASE,
)
"""Gemini CLI's waits, in Go-style durations: "Your quota will reset after 1h49m8s.",
"Please retry in 12.5s", "Suggested retry after 34.07s."."""
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.IGNORECASE)
_PART_SECONDS = {"ms": 0.001, "h": 3_600.0, "m": 60.0, "s": 1.0}
_UNIT = re.compile(r"(\d+)\s*(d|h|m|s)", re.IGNORECASE)
_UNIT_SECONDS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
_AT = re.compile(
    r"(?:try again|resets?)\s+(?:at\s+|on\s+)?"
    r"(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?"
    r"(?:,\s*(?P<year>\d{4}))?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?\s*(?P<half>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?",
    re.IGNORECASE,
)
"""A moment: "resets at 14:05", "resets 4pm (Asia/Kuala_Lumpur)", "resets Apr 23 at 4pm
(America/Recife)", Codex's "try again at 3:28 PM" and "try again at Aug 8th, 2026 12:30
PM" (another day), the demo's "resets at 14:05:30"."""
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def limit_resets(message: str, said_at: datetime) -> datetime | None:
    """When a usage limit resets, as far as the agent's message says; None when it does
    not say (Codex's "Try again later", Gemini's daily quota) or says it unreadably.

    Agents state it as an epoch, a wait ("in 3 hours", "after 1h49m8s", counted from
    `said_at`), or a wall-clock time with or without a date and a zone; one without a
    zone is in this machine's, where the agent ran. A time without a date is the next
    one to come, counting the minute it was said in (a clock shown to the minute).
    """
    if found := _EPOCH.search(message):
        return datetime.fromtimestamp(int(found.group(1)), UTC)
    if found := _IN.search(message):
        seconds = sum(int(n) * _UNIT_SECONDS[u[0].lower()] for n, u in _UNIT.findall(found[1]))
        return said_at + timedelta(seconds=seconds) if seconds else None
    if found := _AFTER.search(message):
        parts = _PART.findall(found[1])
        wait = sum(float(n) * _PART_SECONDS[unit.lower()] for n, unit in parts)
        return said_at + timedelta(seconds=wait)
    for found in _AT.finditer(message):
        moment = _moment(found, said_at)
        if moment is not None:
            return moment
    return None


def _moment(found: re.Match[str], said_at: datetime) -> datetime | None:
    hour, minute, half = int(found["hour"]), int(found["minute"] or 0), found["half"]
    second = int(found["second"] or 0)
    if found["minute"] is None and half is None:
        return None  # a bare number ("resets 3") is no time
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower().startswith("p") else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    zone: tzinfo | None = None
    if found["zone"]:
        try:
            zone = ZoneInfo(found["zone"])
        except (ZoneInfoNotFoundError, ValueError):
            zone = None
    local = said_at.astimezone(zone)  # no zone: this machine's
    moment = local.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if found["month"] is not None:
        month = found["month"].lower()
        if month not in _MONTHS:
            return None
        year = int(found["year"]) if found["year"] else moment.year
        day = int(found["day"])
        try:
            moment = moment.replace(year=year, month=_MONTHS.index(month) + 1, day=day)
        except ValueError:
            return None
        if found["year"] is None and moment < local - timedelta(days=1):
            moment = moment.replace(year=moment.year + 1)
        return moment
    # A clock shown to the minute has cut its seconds off: a minute that began before
    # the message is this one (the reset is due), not tomorrow's.
    rounding = timedelta(seconds=1 if found["second"] else 60)
    return moment if moment > local - rounding else moment + timedelta(days=1)
