"""Keeping credentials out of the processes bugbout starts.

The tests bugbout runs come partly from agents, so they are untrusted code: anything in
their environment could end up in a patch, a log or a report. A developer's shell carries
far more secrets than the well-known `GITHUB_TOKEN`, so variables are judged by the shape
of their name (any `_TOKEN`, `_KEY`, `PASSWORD` …), by well-known credential families
(`AWS_*`, `OPENAI_*` …) and, as a last net, by values that look like a credential
(a URL with a password in it, a GitHub or OpenAI token) whatever the variable is called.
Dropping a harmless variable costs little; letting a key through cannot be undone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# Whole names that carry access without looking like it.
_EXACT_NAMES = frozenset(
    {
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "GIT_ASKPASS",
        "GPG_AGENT_INFO",
        "DOCKER_AUTH_CONFIG",
        "KUBECONFIG",
        "KRB5CCNAME",
        "DBUS_SESSION_BUS_ADDRESS",
        "GNOME_KEYRING_CONTROL",
        "BW_SESSION",
        "MYSQL_PWD",
        "NETRC",
    }
)

# Families where every variable belongs to an account, not to the program being run.
_PREFIXES = (
    "AWS_",
    "AZURE_",
    "GCP_",
    "CLOUDSDK_AUTH_",
    "OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "PYPI_",
    "TWINE_",
    "OP_SESSION_",
    "ACTIONS_RUNTIME_",
    "VSCODE_GIT_",
)

# A name made of `_`-separated words is a credential when one of its words is one of these.
_SECRET_WORDS = frozenset(
    {
        "TOKEN",
        "TOKENS",
        "KEY",
        "APIKEY",
        "AUTH",
        "AUTHTOKEN",
        "PASS",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "PAT",
        "JWT",
        "DSN",
        "COOKIE",
        "WEBHOOK",
    }
)

# Substrings that mark a credential wherever they appear in a name.
_SECRET_FRAGMENTS = ("SECRET", "PASSWORD")

_VALUE_PATTERNS = (
    # scheme://user:password@host — index URLs, database URLs, proxies.
    re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]+@"),
    # GitHub, GitLab, OpenAI/Anthropic, Slack, Hugging Face, npm, PyPI tokens.
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{36}"),
    re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"),
    # AWS access key ids and Google API keys.
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    # Private keys and ready-made HTTP credentials.
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\bauthorization:|^\s*(?:bearer|basic)\s+\S{8,}"),
)


def is_credential(name: str, value: str) -> bool:
    """Whether a variable should be kept from untrusted processes, judged by name or value."""
    upper = name.upper()
    if upper in _EXACT_NAMES or upper.startswith(_PREFIXES):
        return True
    if any(fragment in upper for fragment in _SECRET_FRAGMENTS):
        return True
    if any(word in _SECRET_WORDS for word in upper.split("_")):
        return True
    return any(pattern.search(value) for pattern in _VALUE_PATTERNS)


def scrub_environment(env: Mapping[str, str], *, keep: Iterable[str] = ()) -> dict[str, str]:
    """A copy of `env` without credentials, except the variables named in `keep`.

    `keep` is how an agent receives its own key (and only its own) while everything else
    a developer has exported stays behind.
    """
    allowed = set(keep)
    return {
        name: value
        for name, value in env.items()
        if name in allowed or not is_credential(name, value)
    }
