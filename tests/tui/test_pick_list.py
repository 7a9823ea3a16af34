"""The lane's attempt list on its own, in a small app: cursor, keys, clicks, reorders."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from bugbout_tui.tui.widgets.pick_list import PickList


class ListApp(App[None]):
    def __init__(self, count: int) -> None:
        super().__init__()
        self.rows = [(f"row-{n}", Text(f"row {n}")) for n in range(count)]
        self.picked: list[str] = []

    def compose(self) -> ComposeResult:
        yield PickList()

    def on_mount(self) -> None:
        self.query_one(PickList).set_rows(self.rows)
        self.query_one(PickList).focus()

    def on_pick_list_picked(self, message: PickList.Picked) -> None:
        self.picked.append(message.row_id)


def shown(app: ListApp) -> list[str]:
    """The rows on screen, top to bottom, as plain text."""
    widget = app.query_one(PickList)
    lines = widget.render_lines(widget.size.region)
    return [line.text.strip() for line in lines if line.text.strip()]


async def test_keys_move_the_cursor_within_the_rows_and_enter_picks() -> None:
    app = ListApp(5)
    async with app.run_test(size=(30, 10)) as pilot:
        widget = app.query_one(PickList)
        assert widget.highlighted == "row-0"
        await pilot.press("down", "down", "enter")
        assert app.picked == ["row-2"]
        await pilot.press("end")
        assert widget.highlighted == "row-4"
        await pilot.press("down", "pageup")
        assert widget.highlighted == "row-0"
        await pilot.press("up")
        assert widget.highlighted == "row-0"


async def test_the_cursor_stays_on_its_row_when_the_rows_are_reordered() -> None:
    app = ListApp(4)
    async with app.run_test(size=(30, 10)) as pilot:
        widget = app.query_one(PickList)
        widget.highlight("row-2")
        widget.set_rows(list(reversed(app.rows)))
        await pilot.pause()
        assert widget.highlighted == "row-2"
        assert shown(app) == ["row 3", "row 2", "row 1", "row 0"]
        widget.set_rows(app.rows[:2])
        assert widget.highlighted == "row-0", "its row left: the cursor goes to the top"
        widget.set_rows([])
        assert widget.highlighted is None
        await pilot.press("down", "enter")
        assert app.picked == []


async def test_the_view_follows_the_cursor_past_the_bottom_and_back() -> None:
    app = ListApp(30)
    async with app.run_test(size=(30, 5)) as pilot:
        await pilot.press(*["down"] * 12)
        await pilot.pause()
        assert shown(app) == ["row 8", "row 9", "row 10", "row 11", "row 12"]
        await pilot.press("home")
        await pilot.pause()
        assert shown(app)[0] == "row 0"


async def test_a_click_picks_the_row_under_the_pointer() -> None:
    app = ListApp(5)
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.click(PickList, offset=(2, 3))
        assert app.picked == ["row-3"]
        assert app.query_one(PickList).highlighted == "row-3"


async def test_a_cursor_never_moved_stays_on_the_top_row_when_the_rows_reorder() -> None:
    app = ListApp(4)
    async with app.run_test(size=(30, 10)) as pilot:
        widget = app.query_one(PickList)
        assert widget.highlighted == "row-0"
        widget.set_rows(list(reversed(app.rows)))
        await pilot.press("enter")
        assert widget.highlighted == "row-3"
        assert app.picked == ["row-3"], "enter opens the row under the cursor"
        await pilot.press("down")
        widget.set_rows(app.rows)
        assert widget.highlighted == "row-2", "a cursor moved by a person keeps its row"
