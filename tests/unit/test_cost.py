"""Prices, an attempt's cost, budgets in bugbout.toml and the budget keeper, from records."""

from __future__ import annotations

import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bugbout_tui.core.config import ConfigError, load_config
from bugbout_tui.core.models import Attempt, Tokens
from bugbout_tui.core.prices import Budget, Price, parse_budget, shipped_prices
from bugbout_tui.engine.budget import BudgetKeeper, Spender
from bugbout_tui.engine.estimate import DEFAULTS, expect
from bugbout_tui.report.model import Spend
from bugbout_tui.rules.cost import Billed, Costing, costing_for

MINIMAL = '[project]\nsource = "src/pkg"\n'
WHEN = datetime(2026, 12, 2, tzinfo=UTC)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def problems(repo: Path, text: str) -> list[str]:
    (repo / "bugbout.toml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(repo / "bugbout.toml")
    return str(caught.value).splitlines()


def record(
    task: str,
    name: str,
    *,
    input: int | None = None,
    output: int | None = None,
    cached: int | None = None,
    cost: float | None = None,
    status: str = "finished",
    seconds: float = 60.0,
    logdir: str = "/logs",
) -> Attempt:
    return Attempt.model_validate(
        {
            "task": task,
            "contestant": name,
            "status": status,
            "started_at": WHEN,
            "ended_at": WHEN,
            "seconds": seconds,
            "tokens": Tokens(input=input, output=output, cached=cached),
            "cost_usd": cost,
            "logdir": logdir,
        }
    )


# --- the price table ----------------------------------------------------------------


def test_the_shipped_table_is_dated_sourced_and_prices_the_models_the_docs_name() -> None:
    table = shipped_prices()
    assert table.checked == date(2026, 12, 2)
    assert set(table.sources) == {"openai", "anthropic", "google"}
    assert all(url.startswith("https://") for url in table.sources.values())
    for model in ("gpt-5", "gpt-5-codex", "gpt-5.1-codex", "gemini-2.5-pro",
                  "claude-sonnet-4-5"):  # fmt: skip
        assert table.price(model) is not None, model
    assert table.price("gpt-5") == Price(input=1.25, output=10.0, cached=0.125)


def test_a_model_is_found_under_a_provider_prefix_or_a_date_and_never_guessed() -> None:
    table = shipped_prices()
    haiku = table.price("claude-haiku-4-5")
    assert haiku is not None
    assert table.price("anthropic/claude-haiku-4-5-20251001") == haiku
    assert table.price("openai/gpt-5-2025-08-07") == table.price("gpt-5")
    assert table.price("ollama/qwen3-coder:30b") is None
    assert table.price("gpt-5-nonexistent") is None
    assert table.price(None) is None


def test_the_price_table_ships_in_the_wheel(tmp_path: Path) -> None:
    uv = pytest.importorskip("uv")
    import subprocess

    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [uv.find_uv_bin(), "build", "--wheel", "--out-dir", str(tmp_path), str(root)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    assert "bugbout_tui/data/prices.toml" in zipfile.ZipFile(wheel).namelist()


def test_cached_input_is_priced_apart_from_fresh_input() -> None:
    price = Price(input=1.25, output=10.0, cached=0.125)
    # 1M input of which 800k cached, 20k output
    assert price.cost(1_000_000, 20_000, 800_000) == pytest.approx(
        0.2 * 1.25 + 0.8 * 0.125 + 0.02 * 10.0
    )


# --- an attempt's cost ---------------------------------------------------------------


def test_reported_cost_wins_over_tokens_then_price_then_unknown_never_zero() -> None:
    costing = Costing(shipped_prices(), {"codex": Billed("gpt-5"), "cmd": Billed(None)})
    reported = costing.cost(record("t", "claude", input=10, output=10, cost=0.42))
    assert (reported.usd, reported.basis) == (0.42, "reported")
    priced = costing.cost(record("t", "codex#2", input=1_000_000, output=0, cached=0))
    assert (priced.usd, priced.basis) == (pytest.approx(1.25), "priced")
    assert costing.cost(record("t", "cmd")).basis == "unknown"
    assert costing.cost(record("t", "cmd")).usd is None


def test_an_agent_on_a_plan_shows_plan_not_a_price_even_one_it_reports() -> None:
    costing = Costing(shipped_prices(), {"claude": Billed("claude-sonnet-4-5", "plan")})
    cost = costing.cost(record("t", "claude", input=100, output=10, cost=0.5))
    assert (cost.usd, cost.basis) == (None, "plan")
    assert Spend(attempts=2, plan=2).cost_shown() == "plan"
    assert Spend(attempts=3, plan=1, cost_usd=1.5, cost_reported=2).cost_shown() == "$1.50 + plan"
    assert Spend(attempts=3, cost_usd=1.5, cost_reported=2).cost_shown() == "$1.50 (2 of 3)"


def test_a_project_price_overrides_the_shipped_one(repo: Path) -> None:
    text = MINIMAL + (
        '[prices."gpt-5"]\ninput = 2\noutput = 20\n'
        '[prices."my-local"]\ninput = 0\noutput = 0\n'
        '[[contestants]]\nagent = "codex"\nmodel = "gpt-5"\n'
    )
    (repo / "bugbout.toml").write_text(text)
    config = load_config(repo / "bugbout.toml")
    costing = costing_for(config)
    assert costing.prices.price("gpt-5") == Price(input=2.0, output=20.0, cached=2.0)
    assert costing.prices.price("my-local") == Price(0.0, 0.0, 0.0)
    assert costing.prices.overridden == {"gpt-5", "my-local"}
    cost = costing.cost(record("t", "codex/gpt-5", input=1_000_000, output=0))
    assert cost.usd == pytest.approx(2.0)


# --- budgets in bugbout.toml ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "budget"),
    [
        ("$20", Budget(20.0, "usd", "$20")),
        ("$2.50", Budget(2.5, "usd", "$2.50")),
        ("12 USD", Budget(12.0, "usd", "12 USD")),
        ("2M tokens", Budget(2_000_000, "tokens", "2M tokens")),
        ("500k tokens", Budget(500_000, "tokens", "500k tokens")),
        ("1.5M tokens", Budget(1_500_000, "tokens", "1.5M tokens")),
        ("40 attempts", Budget(40, "attempts", "40 attempts")),
        ("1 attempt", Budget(1, "attempts", "1 attempt")),
    ],
)
def test_budget_syntax(text: str, budget: Budget) -> None:
    assert parse_budget(text) == budget


def test_budget_errors_name_the_file_line_and_key(repo: Path) -> None:
    text = MINIMAL + (
        '[run]\nbudget = "20"\n'
        '[[contestants]]\nagent = "codex"\nbudget = 20\n'
        '[[contestants]]\nagent = "claude-code"\nbilling = "plan"\nbudget = "$5"\n'
        '[[contestants]]\nagent = "gemini-cli"\nbilling = "monthly"\n'
        '[prices."gpt-5"]\ninput = "cheap"\noutput = 1\n'
    )
    assert problems(repo, text) == [
        "invalid value for 'budget' in [run] at bugbout.toml:4: must be an amount with its "
        'unit, e.g. "$20", "2M tokens" or "40 attempts"',
        "invalid value for 'budget' in [[contestants]] #1 at bugbout.toml:7: must be an "
        'amount with its unit in quotes, e.g. "$20", "2M tokens" or "40 attempts"',
        "invalid value for 'budget' in [[contestants]] #2 at bugbout.toml:11: an agent on a "
        'plan (billing = "plan") spends no dollars per attempt; give its budget in tokens or '
        'attempts, e.g. "2M tokens"',
        "invalid value for 'billing' in [[contestants]] #3 at bugbout.toml:14: must be one "
        "of 'api', 'plan'",
        "invalid value for 'gpt-5.input' in [prices] at bugbout.toml:16: must be a number",
    ]


def test_billing_and_budget_are_not_adapter_options(repo: Path) -> None:
    from bugbout_tui.agents.registry import agent_from_config

    text = MINIMAL + '[[contestants]]\nagent = "codex"\nbilling = "plan"\nbudget = "9 attempts"\n'
    (repo / "bugbout.toml").write_text(text)
    (entry,) = load_config(repo / "bugbout.toml").contestants
    assert entry.billing == "plan" and entry.budget_limit == Budget(9, "attempts", "9 attempts")
    assert agent_from_config(entry.model_dump()).settings == {}


# --- the budget keeper ----------------------------------------------------------------


def keeper(
    *, bout: str | None = None, own: dict[str, str] | None = None,
    stored: list[Attempt] = (), plan: bool = False,  # type: ignore[assignment]
) -> BudgetKeeper:  # fmt: skip
    billing = "plan" if plan else "api"
    costing = Costing(shipped_prices(), {"codex": Billed("gpt-5", billing)})
    return BudgetKeeper(
        bout=None if bout is None else parse_budget(bout),
        own={name: parse_budget(text) for name, text in (own or {}).items()},
        spenders={"codex": Spender("codex", "gpt-5")},
        costing=costing,
        stored=stored,
    )


def test_a_token_budget_stops_the_attempt_that_would_pass_it_counting_those_under_way() -> None:
    past = [record(f"t{n}", "codex", input=90_000, output=10_000) for n in range(3)]
    keep = keeper(own={"codex": "500k tokens"}, stored=past)  # 300k spent, 100k each
    assert keep.admit("t3/codex", "codex") is None
    assert keep.admit("t4/codex", "codex") is None
    refusal = keep.admit("t5/codex", "codex")
    assert refusal == (
        "the budget 500k tokens of codex would be passed: 300k tokens spent, 2 under way, "
        "about 100k tokens per attempt"
    )
    # One finishes cheaper than expected: the mean drops, and there is room again.
    keep.recorded(record("t3", "codex", input=5_000, output=0))
    assert keep.admit("t5/codex", "codex") is None


def test_a_dollar_budget_counts_trials_and_known_costs() -> None:
    past = [record("t1", "codex", input=1_000_000, output=0), record("t1", "codex#2", cost=1.0)]
    keep = keeper(own={"codex": "$3"}, stored=past)  # $1.25 + $1.00, mean $1.125
    assert keep.admit("t2/codex", "codex#3") is not None
    assert keeper(own={"codex": "$4"}, stored=past).admit("t2/codex", "codex") is None


def test_an_attempt_run_again_replaces_what_its_earlier_record_spent() -> None:
    keep = keeper(own={"codex": "2 attempts"}, stored=[record("t1", "codex", status="crashed")])
    assert keep.admit("t1/codex", "codex") is None
    keep.recorded(record("t1", "codex"))
    assert keep.admit("t2/codex", "codex") is None
    keep.recorded(record("t2", "codex"))
    assert keep.admit("t3/codex", "codex") is not None


def test_attempts_that_never_ran_spend_nothing() -> None:
    stored = [
        record("t1", "codex", status="budget", logdir=""),
        record("t2", "codex", status="skipped"),
        record("t3", "codex", status="quota", logdir=""),
    ]
    assert keeper(own={"codex": "1 attempt"}, stored=stored).admit("t4/codex", "codex") is None


def test_a_dollar_bout_budget_leaves_agents_on_a_plan_alone() -> None:
    past = [record("t1", "codex", input=1_000_000, output=100_000)]
    assert keeper(bout="$0.01", stored=past, plan=True).admit("t2/codex", "codex") is None
    assert keeper(bout="$0.01", stored=past).admit("t2/codex", "codex") is not None
    assert keeper(bout="1 attempt", stored=past, plan=True).admit("t2/codex", "codex")


# --- what one attempt is expected to spend ----------------------------------------------


def test_expected_spend_is_the_mean_of_past_attempts_else_the_agents_default() -> None:
    costing = Costing(shipped_prices(), {"codex": Billed("gpt-5")})
    fresh = expect("codex", "gpt-5", [], "codex", costing)
    default = DEFAULTS["codex"]
    assert fresh.basis == "default"
    assert fresh.tokens == default.input + default.output  # type: ignore[operator]
    assert fresh.usd == pytest.approx(
        shipped_prices().price("gpt-5").cost(default.input, default.output, default.cached)  # type: ignore[union-attr, arg-type]
    )
    past = [
        record("t1", "codex", input=100, output=0, seconds=10),
        record("t2", "codex", input=300, output=0, seconds=30),
        record("t3", "codex", status="budget", logdir="", seconds=0),
    ]
    seen = expect("codex", "gpt-5", past, "codex", costing)
    assert (seen.basis, seen.history, seen.tokens, seen.seconds) == ("history", 2, 200, 20)
    assert expect("command", None, [], "x", costing).tokens is None
