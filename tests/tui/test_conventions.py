"""The app's conventions: keys that spend quota or stop agents ask first, one meaning per
key on every screen, the theme remembered across restarts, and a palette of actions."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from racekit import alive, contestant, copy_project, script
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from tuiapp import calc_app, press_and_settle, settle, until

import bugbout_tui.tui
from bugbout_tui.core.preferences import PREFERENCES_NAME
from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.commands import ActionsProvider
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.widgets.dialogs import Choice

# --- asking before spending or stopping ---------------------------------------------------


def phase(app: BugboutApp, attempt: str) -> str | None:
    view = app.state.attempts.get(attempt)
    return None if view is None else view.phase


def asking(app: BugboutApp) -> str:
    """The title of the question on screen; fails when there is none."""
    screen = app.screen
    assert isinstance(screen, Choice), f"no question on screen, but {screen!r}"
    return screen._title


@pytest.mark.slow
async def test_q_and_s_during_a_race_ask_first_and_no_leaves_it_running(
    project_template: Path, tmp_path: Path
) -> None:
    token = f"bugbout-tui-ask-{tmp_path.name}"
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"],
        extra=contestant("hang", script("hang", token)),
    )  # fmt: skip

    app = calc_app(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3", "s")
        assert asking(app) == "Start the bout?"
        await pilot.press("escape")
        await settle(pilot)
        assert app.engine is None and not isinstance(app.screen, Choice)

        await pilot.press("s", "enter")
        await until(pilot, lambda: phase(app, "calc-1/hang") == "running", "the start", 60)
        await until(pilot, lambda: bool(alive(token)), "the agent's helper", 30)

        for key in ("q", "s", "ctrl+q"):
            await pilot.press(key)
            assert asking(app) in ("Stop the bout and quit?", "Stop the bout?")
            await pilot.press("escape")
            await pilot.pause(0.5)
            assert app.is_running and app.return_code is None, key
            assert app.engine is not None and phase(app, "calc-1/hang") == "running", key
            assert alive(token), key

        await pilot.press("q")
        assert asking(app) == "Stop the bout and quit?"
        await pilot.press("enter")
        await until(pilot, lambda: app.return_code is not None, "the app to quit", 30)
    assert app.return_code == 0
    assert not alive(token)


async def test_start_and_retry_failed_ask_first_and_no_starts_nothing(calc: Path) -> None:
    records = {path: path.read_bytes() for path in (calc / ".bugbout").rglob("*") if path.is_file()}
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await press_and_settle(pilot, "3")
        assert app.check_action("start", ()) and not app.check_action("stop", ())
        await pilot.press("f")
        assert asking(app) == "Retry the failed attempts?"
        await press_and_settle(pilot, "escape")
        assert app.engine is None
        await pilot.press("s")
        assert asking(app) == "Start the bout?"
        await press_and_settle(pilot, "escape")
        assert app.engine is None
        await pilot.press("q")
        await until(pilot, lambda: app.return_code is not None, "the app to quit", 10)
    after = {path: path.read_bytes() for path in (calc / ".bugbout").rglob("*") if path.is_file()}
    assert after == records


# --- one meaning per key ------------------------------------------------------------------

GENERIC_KEYS = frozenset(
    {"enter", "escape", "space", "up", "down", "left", "right", "home", "end", "pageup",
     "pagedown", "shift+tab"}
)  # fmt: skip
"""Keys that act on whatever has the focus (open it, leave it, toggle it, move in it):
their meaning is the focused widget's, as in every Textual app."""

TOGGLES = [frozenset({"start", "stop"})]
"""One key for the two states of one switch; check_action enables one at a time."""


def bindings_of_the_app() -> Iterator[tuple[str, Binding]]:
    """(where, binding) for every binding a screen of the app can have active: the app's
    (with Textual's own), every screen's (with Screen's own), every widget's; `where` is
    the class that declares it. Textual's own keys among themselves (ctrl+c copies a
    selection, else says how to quit) are Textual's convention, not checked here."""
    package = bugbout_tui.tui
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    classes: set[type[DOMNode]] = {BugboutApp, Screen}  # type: ignore[arg-type]
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith(package.__name__):
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, DOMNode) and cls.__module__ == module_name:
                classes.add(cls)
    for cls in classes:
        own = [cls, *cls.__mro__[1:]] if cls in (BugboutApp, Screen) else [cls]
        for holder in own:
            if holder is object or not issubclass(holder, (DOMNode, App)):
                continue
            for binding in Binding.make_bindings(holder.__dict__.get("BINDINGS", [])):
                yield f"{holder.__module__}.{holder.__name__}", binding


def test_every_key_means_one_thing_on_every_screen() -> None:
    meanings: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for where, binding in bindings_of_the_app():
        if binding.key not in GENERIC_KEYS:
            meanings[binding.key][binding.action.removeprefix("app.")].add(where)
    assert meanings["s"].keys() == {"start", "stop"}
    clashes = {
        key: {action: sorted(places) for action, places in actions.items()}
        for key, actions in meanings.items()
        if len(actions) > 1
        and frozenset(actions) not in TOGGLES
        and any(where.startswith("bugbout_tui.") for places in actions.values() for where in places)
    }
    assert not clashes, f"keys with more than one meaning: {clashes}"


# --- the theme ----------------------------------------------------------------------------


async def test_the_chosen_theme_is_there_after_a_restart(
    calc: Path, preferences_home: Path
) -> None:
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.theme != "nord"
        app.theme = "nord"
        await settle(pilot)
    stored = json.loads((preferences_home / PREFERENCES_NAME).read_text())
    assert stored["theme"] == "nord"

    again = calc_app(calc)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.theme == "nord"


async def test_a_broken_preferences_file_is_ignored_with_a_notice(
    calc: Path, preferences_home: Path
) -> None:
    preferences_home.mkdir(parents=True)
    (preferences_home / PREFERENCES_NAME).write_text('{"theme": ["not", "a", "name"')
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.is_running
        notices = [note.message for note in app._notifications]
        assert any("not a preferences file bugbout can read" in note for note in notices)
        app.theme = "gruvbox"
        await settle(pilot)
    assert json.loads((preferences_home / PREFERENCES_NAME).read_text())["theme"] == "gruvbox"


# --- the palette and the footer -----------------------------------------------------------

MOVES = {"Up", "Down", "Left", "Right", "Page up", "Page down", "First", "Last",
         "First column", "Last column"}  # fmt: skip


@pytest.mark.parametrize("key", ["1", "2", "3", "4", "5", "6"])
async def test_the_palette_lists_actions_not_cursor_moves(calc: Path, key: str) -> None:
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await press_and_settle(pilot, key)
        names = {command.text for command in ActionsProvider(app.screen)._commands()}
        assert {"Start", "Keys", "Quit", "Go to Matrix"} <= names
        assert not names & MOVES, names & MOVES


async def test_tab_between_lanes_is_in_the_footer(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=(160, 40)) as pilot:
        await press_and_settle(pilot, "3")
        assert isinstance(app.screen, RaceScreen)
        shown = {
            binding.key: binding.description
            for _node, binding, enabled, _tip in app.screen.active_bindings.values()
            if binding.show and enabled
        }
        assert shown.get("tab") == "Next lane"
        footer = str(app.screen.query_one("Footer").render()) + "".join(
            str(key.render()) for key in app.screen.query("FooterKey")
        )
        assert "Next lane" in footer
