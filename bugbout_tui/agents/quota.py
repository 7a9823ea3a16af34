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
