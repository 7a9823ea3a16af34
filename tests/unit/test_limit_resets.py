"""When a usage limit resets, read from the words each agent uses to say so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bugbout_tui.agents.quota import limit_resets

SAID_AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LOCAL = SAID_AT.astimezone()


def local_at(hour: int, minute: int = 0) -> datetime:
    moment = LOCAL.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return moment if moment > LOCAL else moment + timedelta(days=1)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the demo's rationed agent, in this machine's time
        ("You've hit your usage limit. Try again later (your limit resets at 14:05).",
         local_at(14, 5)),
        # Codex, Plus plan
        ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/pricing), visit "
         "https://chatgpt.com/codex/settings/usage to purchase more credits or try again at "
         "3:28 PM.", local_at(15, 28)),
        # a wait, counted from when it was said
        ("You've hit your usage limit. Try again in 3 hours.", SAID_AT + timedelta(hours=3)),
        ("usage limit reached; resets in 2h 13m", SAID_AT + timedelta(hours=2, minutes=13)),
        # Claude Code 2.x, with its zone: 20:00 in Kuala Lumpur, so 4pm is tomorrow's
        ("You've hit your limit · resets 4pm (Asia/Kuala_Lumpur)",
         datetime(2026, 1, 2, 16, 0, tzinfo=ZoneInfo("Asia/Kuala_Lumpur"))),
        ("You've hit your limit · resets Apr 23 at 4pm (America/Recife)",
         datetime(2026, 4, 23, 16, 0, tzinfo=ZoneInfo("America/Recife"))),
        ("You've hit your limit · resets 2:50am (UTC)", datetime(2026, 1, 2, 2, 50, tzinfo=UTC)),
        # Claude Code 1.0.x: an epoch
        ("Claude AI usage limit reached|1767272400", datetime(2026, 1, 1, 13, 0, tzinfo=UTC)),
        # Claude Code 1.0.x in words
        ("Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
         datetime(2026, 1, 1, 17, 0, tzinfo=ZoneInfo("Europe/Warsaw"))),
        # Codex, a reset on another day: `%b %-d{suffix}, %Y %-I:%M %p` in local time
        ("You've hit your usage limit. Try again at Aug 8th, 2026 12:30 PM.",
         LOCAL.replace(year=2026, month=8, day=8, hour=12, minute=30, second=0)),
        ("You’ve hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to "
         "purchase more credits or try again at Jan 2nd, 2026 9:05 AM.",
         LOCAL.replace(year=2026, month=1, day=2, hour=9, minute=5, second=0)),
        # Gemini CLI: the Code Assist quota, its API's retry hint, and the CLI's own
        ("TerminalQuotaError: You have exhausted your capacity on this model. Your quota "
         "will reset after 1h49m8s.", SAID_AT + timedelta(hours=1, minutes=49, seconds=8)),
        ("You exceeded your current quota. Please retry in 12.5s.",
         SAID_AT + timedelta(seconds=12.5)),
        ("Suggested retry after 250ms.", SAID_AT + timedelta(milliseconds=250)),
        # the demo's rationed agent, to the second
        ("You've hit your usage limit. Try again later (your limit resets at 14:05:30).",
         local_at(14, 5) + timedelta(seconds=30)),
    ],
)  # fmt: skip
def test_the_reset_time_is_read_from_each_wording(message: str, expected: datetime) -> None:
    assert limit_resets(message, SAID_AT) == expected


@pytest.mark.parametrize(
    "message",
    [
        "You've hit your usage limit. Try again later.",
        "RESOURCE_EXHAUSTED: You have exhausted your daily quota",
        "You've hit your limit · resets 3",  # a bare number is no time
        "You've hit your limit · resets 25:00",
    ],
)
def test_no_reset_time_when_the_message_gives_none(message: str) -> None:
    assert limit_resets(message, SAID_AT) is None


def test_a_time_to_the_minute_that_began_before_the_message_is_this_minute() -> None:
    """Codex shows its reset to the minute, seconds cut off: "3:28 PM" said at 3:28:40
    is due now, not at 3:28 tomorrow."""
    said = LOCAL.replace(hour=15, minute=28, second=40)
    due = limit_resets("You've hit your usage limit. Try again at 3:28 PM.", said)
    assert due == said.replace(second=0)
    said = LOCAL.replace(hour=15, minute=29, second=10)
    assert limit_resets("You've hit your usage limit. Try again at 3:28 PM.", said) == (
        said.replace(minute=28, second=0) + timedelta(days=1)
    )
