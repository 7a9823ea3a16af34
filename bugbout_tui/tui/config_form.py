"""The Config screen's fields: which keys it edits, and how text in a box becomes a value.

Every key of bugbout.toml has a field; `[prices]` has one per model, edited as a table.
A field only converts what was typed (a blank box removes the key, so the default
applies); whether the value is right is decided by the same pydantic model that loads
the file, so the screen and `bugbout run` never disagree about what is valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Item

from bugbout_tui.core.agent_facts import BUILTIN_FACTS
from bugbout_tui.core.config import AgentView, Billing, EnvironmentsMode, Policy, Sandbox
from bugbout_tui.core.config_doc import AgentTable, ConfigDocument
from bugbout_tui.core.prices import shipped_prices

FieldKind = Literal["text", "int", "bool", "choice", "toml"]

SANDBOX_CHOICES: tuple[str, ...] = get_args(Sandbox)
POLICY_CHOICES: tuple[str, ...] = get_args(Policy)
VIEW_CHOICES: tuple[str, ...] = get_args(AgentView)
ENVIRONMENTS_CHOICES: tuple[str, ...] = get_args(EnvironmentsMode)
BILLING_CHOICES: tuple[str, ...] = get_args(Billing)


@dataclass(frozen=True)
class FieldSpec:
    """One key: its name as written in the file, how it is edited, and what it is for."""

    key: str
    kind: FieldKind
    help: str
    default: str = ""
    """What applies when the key is absent, shown greyed in the empty box."""
    choices: tuple[str, ...] = ()


SECTIONS: dict[str, tuple[FieldSpec, ...]] = {
    "project": (
        FieldSpec("source", "text", "the package under test, relative to the repository",
                  "src/mypkg"),
        FieldSpec("tests", "text", "where the tests live", "tests"),
        FieldSpec("repository", "text", "the git checkout (a path) or a URL to clone", "."),
        FieldSpec("github", "text", "owner/name to read issues from", "from the origin remote"),
        FieldSpec("python", "text", "Python of the test environment", "the running one"),
        FieldSpec("test-dependencies", "toml", "what the tests need, a TOML list",
                  '["pytest"]'),
        FieldSpec("pytest-args", "toml", "extra pytest arguments, a TOML list", "[]"),
        FieldSpec("env", "toml", "environment of test runs, a TOML table", "{}"),
        FieldSpec("install-project", "bool", "install the project into the environment",
                  "true"),
        FieldSpec("interpreter", "text", "an existing Python to run tests with", "none"),
        FieldSpec("issues-file", "text", "issues from a JSON file instead of GitHub", "none"),
        FieldSpec("environments", "choice", "each task's dependencies as of its fix, or the tip's",
                  "dated", ENVIRONMENTS_CHOICES),
    ),
    "tasks": (
        FieldSpec("since", "text", "only fixes after this date (YYYY-MM-DD)", "all history"),
        FieldSpec("limit", "int", "how many of the newest fixes become tasks", "20"),
        FieldSpec("max-source-files", "int", "broader fixes are left out", "2"),
        FieldSpec("reruns", "int", "runs of the fix in the ground truth; flips are flakes",
                  "2"),
        FieldSpec("require-review", "bool", "race only tasks accepted on the Tasks screen",
                  "false"),
        FieldSpec("kinds", "toml", 'what the history is mined for: ["bug"], ["env"] or both',
                  '["bug"]'),
    ),
    "run": (
        FieldSpec("sandbox", "choice", "how agents and tests are confined", "auto",
                  SANDBOX_CHOICES),
        FieldSpec("agent-view", "choice", "what agents may read: the machine or their own",
                  "host", VIEW_CHOICES),
        FieldSpec("timeout", "int", "seconds one agent may spend on one task", "1800"),
        FieldSpec("test-timeout", "int", "seconds one test run may take", "600"),
        FieldSpec("quotas", "toml", "runs at once per quota, a TOML table", "{} (one each)"),
        FieldSpec("wait-for-quota", "text", "how long a lane on a usage limit may wait for "
                  "its window to reopen, e.g. 6h", "off"),
        FieldSpec("cluster", "text", "a Dask scheduler whose workers run the tests and the "
                  "agents they declare, e.g. tcp://host:8786", "this machine"),
        FieldSpec("max-patch-files", "int", "more changed files: the attempt is oversized",
                  "5000"),
        FieldSpec("max-patch-bytes", "int", "more changed bytes: the attempt is oversized",
                  "10485760"),
        FieldSpec("hide-touched-tests", "bool", "keep every test file the fix touched out "
                  "of the agents' checkouts", "false"),
        FieldSpec("budget", "text", 'what the whole bout may spend: "$20", "2M tokens", '
                  '"40 attempts"', "none"),
        FieldSpec("stop-when-decided", "bool", "start no new bug once every pair of "
                  "contestants is decided", "false"),
        FieldSpec("decided-at", "toml", "the chance, at most, of a wrongly decided pair",
                  "0.05"),
        FieldSpec("trials", "int", "independent attempts of each contestant on each task",
                  "1"),
    ),
    "judge": (
        FieldSpec("policy", "choice", "how one patch is picked per bug", "majority",
                  POLICY_CHOICES),
        FieldSpec("run-suite", "bool", "also run the repository's tests on every patch",
                  "true"),
    ),
    "env": (
        FieldSpec("index", "text", "where environment repairs install from (simple API)",
                  "https://pypi.org/simple"),
        FieldSpec("advisories", "text", "the index's JSON API, for the dependency audit",
                  "https://pypi.org/pypi"),
        FieldSpec("lite", "bool", "race the built-in Lite environment tasks too", "false"),
    ),
}  # fmt: skip

AGENT_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("agent", "choice", "the agent program", "", tuple(BUILTIN_FACTS)),
    FieldSpec("model", "text", "the model; blank for the agent's default", "default"),
    FieldSpec("name", "text", "how it appears in results", "agent/model"),
    FieldSpec("vendor", "text", "who made the model (for cross-vendor)", "guessed"),
    FieldSpec("quota", "text", "agents sharing a quota take turns", "the agent type"),
    FieldSpec("view", "choice", "what it may read: the machine or its own", "[run] agent-view",
              VIEW_CHOICES),
    FieldSpec("billing", "choice", "paid per token (api) or by a subscription (plan)", "api",
              BILLING_CHOICES),
    FieldSpec("budget", "text", "what it may spend, all trials: $, tokens or attempts", "none"),
)  # fmt: skip
ASSIGNMENT = FieldSpec(
    "assignment", "choice", "reproduce the bug, or also specify the rule", "reproduce",
    ("reproduce", "specify"),
)  # fmt: skip
TRIALS = FieldSpec("trials", "int", "its attempts per task, each from a fresh checkout",
                   "[run] trials")  # fmt: skip
OPTIONS = FieldSpec(
    "options", "toml", "the agent's own options, a TOML table", '{ effort = "high" }'
)
"""Every other key of an agent's table, edited together."""

AGENT_TABLES: tuple[AgentTable, ...] = ("contestants", "examiners")


def agent_fields(table: str) -> tuple[FieldSpec, ...]:
    return (*AGENT_FIELDS, ASSIGNMENT) if table == "examiners" else (*AGENT_FIELDS, TRIALS)


def fixed_agent_keys(table: str) -> frozenset[str]:
    """Keys an agent's table has its own field for; the rest are options."""
    return frozenset(spec.key for spec in agent_fields(table))


PRICE_HELP = "dollars per million tokens: { input = …, output = …, cached = … }"
NEW_PRICE = FieldSpec("model", "text", "the model to price, as its agent is given it")
"""The name asked for when a price is added for a model no agent names yet."""


def price_spec(model: str) -> FieldSpec:
    """The field of one model's price; its default is the shipped list price, if any."""
    shipped = shipped_prices().price(model)
    if shipped is None:
        default = "none, so its cost is unknown"
    else:
        listed = {"input": shipped.input, "output": shipped.output, "cached": shipped.cached}
        default = f"{toml_inline(listed)} (list price)"
    return FieldSpec(model, "toml", PRICE_HELP, default)


def priced_models(document: ConfigDocument, added: tuple[str, ...] = ()) -> list[str]:
    """The models the Config screen shows a price for: those `[prices]` sets, then those
    the agents name (so the price that applies to each is in view), then `added`."""
    models: list[str] = []
    prices = document.get(("prices",))
    named = [
        entry.get("model")
        for table in AGENT_TABLES
        for entry in document.get((table,)) or []
        if isinstance(entry, dict)
    ]
    for model in [*(prices if isinstance(prices, dict) else {}), *named, *added]:
        if isinstance(model, str) and model and model not in models:
            models.append(model)
    return models


_WHOLE = re.compile(r"[+-]?\d+")


def parse_field(kind: FieldKind, text: str) -> tuple[Any, str | None]:
    """The value typed into a box, or an error when it cannot be a value at all.

    Blank means "remove the key" (None). A number that is not whole is passed on as
    text, so the model's own message says what is wrong.
    """
    stripped = text.strip()
    if not stripped:
        return None, None
    if kind == "int":
        return (int(stripped), None) if _WHOLE.fullmatch(stripped) else (stripped, None)
    if kind == "toml":
        try:
            value = tomlkit.parse(f"value = {stripped}")["value"]
        except TOMLKitError as exc:
            return None, f"not a TOML value: {exc}"
        return (value.unwrap() if isinstance(value, Item) else value), None
    return text, None


def show_value(kind: FieldKind, value: Any) -> str:
    """A value from the file as the box shows it."""
    if value is None:
        return ""
    if kind == "toml":
        return toml_inline(value)
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def toml_inline(value: Any) -> str:
    """A value as it would be written on one line of TOML."""
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for key, item in value.items():
            table[key] = item
        inner = str(table.as_string()).strip()[1:-1].strip()
        return f"{{ {inner} }}" if inner else "{}"
    return str(tomlkit.item(value).as_string())
