"""The Config screen: every key of bugbout.toml in one table, edited in place, validated live.

Edits go into a `ConfigDocument`, which changes only the key edited, so saving keeps the
file's comments, order and layout. What is being typed is tried on a copy of the document
and validated after every key press by the model `bugbout run` loads it with, each
problem shown beside its key; only `enter` puts the value into the document, so the
half-typed states on the way (an empty box among them) never touch the file's layout.
The form is one table and one editor line rather than a widget per key: a bout with a
few agents has sixty keys, and the screen must open at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from bugbout_tui.agents.registry import agent_from_config
from bugbout_tui.core import look
from bugbout_tui.core.config_doc import AgentTable, ConfigDocument
from bugbout_tui.core.config_errors import (
    ConfigError,
    ConfigProblem,
    Loc,
    display_path,
    dotted,
)
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.tui.config_form import (
    AGENT_TABLES,
    NEW_PRICE,
    OPTIONS,
    SECTIONS,
    FieldSpec,
    agent_fields,
    fixed_agent_keys,
    price_spec,
    priced_models,
    show_value,
)
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.widgets.columns import Column, add_columns, fit_columns
from bugbout_tui.tui.widgets.dialogs import Choice
from bugbout_tui.tui.widgets.fields import FieldEditor

_AGENT = re.compile(r"^(contestants|examiners)\[(\d+)\]")

TABLE_HELP = {
    "contestants": "agents that fix each bug; one table per agent and model",
    "examiners": "agents that only write tests from the issue; their tests judge patches",
    "prices": "per model, over the list prices bugbout ships; blank: the list price",
}

PRICES: Loc = ("prices",)
ADD_PRICE = "add:prices"

RowKind = Literal["section", "field", "agent", "add", "note"]


@dataclass(frozen=True)
class FormRow:
    """One line of the form."""

    key: str
    kind: RowKind
    label: str
    loc: Loc = ()
    spec: FieldSpec | None = None
    table: AgentTable | None = None
    index: int = -1


Cells = tuple[tuple[str, str], tuple[str, str], tuple[str, str]]
"""(text, style) of the key, value and note columns: compared to find changed cells."""


COLUMNS = (
    Column("key", "key", 20),
    Column("value", "value", 80, share=2),
    Column("note", "what it is for, or what is wrong", 120, share=3),
)
"""The form's columns: the key as wide as `install-project` and its indent needs, the
value and the note sharing the rest."""


def _cell(text: str, style: str) -> Text:
    """A table cell; values and problems quote the file, which may come with a clone."""
    return Text(inert_line(text), style=style, no_wrap=True, overflow="ellipsis")


def problem_text(problem: ConfigProblem) -> str:
    """A problem as a short phrase for beside its key (the row names the key)."""
    if problem.kind == "syntax":
        return str(problem)
    if problem.kind == "unknown-key":
        text = f"unknown key '{problem.name}'"
    elif problem.kind == "missing-key":
        text = f"required: {problem.message}" if problem.message else "required"
    else:
        text = problem.message or "invalid value"
    if problem.suggestion:
        text += f"; did you mean '{problem.suggestion}'?"
    return text


def form_rows(document: ConfigDocument, added_prices: tuple[str, ...] = ()) -> list[FormRow]:
    """Every section and key, then every agent with its keys, in the file's order, then
    the price of every model the file prices or an agent names (and of `added_prices`,
    models named on the screen and not priced yet)."""
    rows: list[FormRow] = []
    for section, specs in SECTIONS.items():
        rows.append(FormRow(f"[{section}]", "section", f"[{section}]"))
        rows.extend(
            FormRow(dotted((section, spec.key)), "field", spec.key, (section, spec.key), spec)
            for spec in specs
        )
        if section == "tasks":
            rows.append(FormRow("tasks.decisions", "note", "include / exclude"))
    for table in AGENT_TABLES:
        rows.append(FormRow(f"[[{table}]]", "section", f"[[{table}]]"))
        entries = document.get((table,))
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict):
                continue
            head = dotted((table, index))
            rows.append(FormRow(head, "agent", f"#{index + 1}", (table, index), None, table, index))
            for spec in (*agent_fields(table), OPTIONS):
                loc = (table, index, spec.key)
                rows.append(FormRow(dotted(loc), "field", spec.key, loc, spec, table, index))
        singular = table[:-1]
        rows.append(FormRow(f"add:{table}", "add", f"+ add {singular}", (table,), None, table))
    rows.append(FormRow("[prices]", "section", "[prices]"))
    for model in priced_models(document, added_prices):
        price: Loc = (*PRICES, model)
        rows.append(FormRow(dotted(price), "field", f'"{model}"', price, price_spec(model)))
    rows.append(FormRow(ADD_PRICE, "add", "+ add price", PRICES))
    return rows


def agent_options(document: ConfigDocument, agent: Loc) -> dict[str, Any]:
    entry = document.get(agent)
    current = entry if isinstance(entry, dict) else {}
    fixed = fixed_agent_keys(str(agent[0]))
    return {k: v for k, v in current.items() if k not in fixed}


class FormTable(DataTable[Text]):
    """The form's table; enter edits the highlighted key.

    Its columns share the table's width rather than taking a fixed one: the note says
    what is wrong with a value, so at 80 columns it must be on screen, not scrolled off.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Edit", id="edit-key",
                tooltip="Edit the highlighted key; it is checked as you type"),
    ]  # fmt: skip

    def on_resize(self) -> None:
        fit_columns(self, COLUMNS)
        # Whatever takes room from the table (the editor opening, its hint wrapping at
        # 80 columns), the highlighted key is the one being edited: keep it in view.
        self.call_after_refresh(self.move_cursor, row=self.cursor_row, scroll=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No editing while read-only: the key is hidden, not refused."""
        screen = self.screen
        read_only = isinstance(screen, BoutScreen) and screen.session.watching
        return not (action == "select_cursor" and read_only)


class ConfigScreen(BoutScreen):
    """bugbout.toml as a table of keys; enter edits one, ctrl+s saves the file."""

    MODE = "config"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="save", tooltip="Write bugbout.toml (comments kept)",
                priority=True),
        Binding("ctrl+r", "revert", "Revert", id="revert", tooltip="Read bugbout.toml again",
                priority=True, show=False),
        Binding("n", "new_agent", "New agent", id="new-agent",
                tooltip="Add a [[contestants]] or an [[examiners]] table"),
        Binding("delete", "remove_agent", "Remove agent", id="remove-agent",
                tooltip="Remove the agent the highlighted key belongs to"),
    ]  # fmt: skip
    WRITES = frozenset({"save", "revert", "add_agent", "remove_agent"})

    class AgentChecked(Message):
        """Whether an agent's program was found, worked out in a thread."""

        def __init__(self, table: str, index: int, found: bool, text: str) -> None:
            super().__init__()
            self.table = table
            self.index = index
            self.found = found
            self.text = text

    def __init__(self) -> None:
        super().__init__()
        self.document: ConfigDocument | None = None
        self._load_error: str | None = None
        self._rows: dict[str, FormRow] = {}
        self._shown: dict[str, Cells] = {}
        self._problems: dict[str, list[str]] = {}
        self._general: list[str] = []
        """Problems of no row of the form, shown above the table."""
        self._local: dict[str, str] = {}
        """Row key → text that could not even be parsed (the document was not changed)."""
        self._found: dict[str, tuple[bool, str]] = {}
        """Agent row key → whether its program was found, and the path or the reason."""
        self._draft: tuple[Loc, Any] | None = None
        """The value being typed, not yet kept with enter."""
        self._draft_document: ConfigDocument | None = None
        """The document with the draft applied: what the form shows and validates."""
        self._blank: str | None = None
        """The row whose box is empty while typing: enter would remove its key."""
        self._added_prices: tuple[str, ...] = ()
        """Models named with "+ add price" whose price is not in the document yet."""
        self._naming: str | None = None
        """The model name being typed after "+ add price"."""

    def body(self) -> ComposeResult:
        yield Static(id="config-status")
        yield Static(id="config-problems")
        yield FormTable(id="config-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="config-detail")
        yield FieldEditor()

    @property
    def table(self) -> FormTable:
        return self.query_one(FormTable)

    @property
    def editor(self) -> FieldEditor:
        return self.query_one(FieldEditor)

    def on_mount(self) -> None:
        table = self.table
        add_columns(table, COLUMNS)
        self._load()

    @property
    def has_unsaved_changes(self) -> bool:
        """Edits kept in the document, or a value still being typed."""
        return self.document is not None and (self.document.modified or self._draft is not None)

    # --- loading and drawing -------------------------------------------------------------

    def _load(self) -> None:
        try:
            self.document = ConfigDocument.load(self.session.config_path)
            self._load_error = None
        except BugboutError as exc:
            self.document = None
            self._load_error = str(exc)
        self._local.clear()
        self._found.clear()
        self._added_prices = ()
        self._forget_draft()
        self._rebuild()

    def _rebuild(self) -> None:
        """Lay the rows out afresh (after loading, or adding or removing an agent)."""
        document = self.document
        table = self.table
        keep = self._highlighted()
        rows = form_rows(document, self._added_prices) if document is not None else []
        self._rows = {row.key: row for row in rows}
        self._shown = {}
        self._problems = self._find_problems()
        with self.app.batch_update():
            table.clear()
            for row in rows:
                cells = self._cells(row)
                self._shown[row.key] = cells
                table.add_row(*(_cell(text, style) for text, style in cells), key=row.key)
            if keep in self._rows:
                table.move_cursor(row=table.get_row_index(keep))
            elif rows:
                table.move_cursor(row=1)
        self._show_status()
        self._show_detail(self._highlighted())
        for row in rows:
            if row.kind == "agent" and row.key not in self._found:
                self._check(row)

    def _highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @property
    def _shown_document(self) -> ConfigDocument | None:
        """The document as the form shows it: with the value being typed, if any."""
        return self._draft_document or self.document

    def _value(self, row: FormRow) -> Any:
        document = self._shown_document
        if document is None or row.spec is None:
            return None
        if row.spec is OPTIONS:
            return agent_options(document, row.loc[:-1]) or None
        return document.get(row.loc)

    def _cells(self, row: FormRow) -> Cells:
        """What each column of a row says, as (text, style)."""
        indent = "    " if row.table is not None and row.kind == "field" else "  "
        if row.kind == "section":
            help_text = TABLE_HELP.get(row.label.strip("[]"), "")
            return (row.label, "bold"), ("", ""), (help_text, "dim")
        if row.kind == "add":
            return (f"  {row.label}", "bold cyan"), ("enter adds one", "dim"), ("", "")
        if row.kind == "note":
            document = self._shown_document
            include = (document.get(("tasks", "include")) if document else None) or []
            exclude = (document.get(("tasks", "exclude")) if document else None) or []
            value = f"{len(include)} accepted, {len(exclude)} excluded"
            return ((f"  {row.label}", "dim"), (value, "dim"),
                    ("decided on the Tasks screen (2)", "dim"))  # fmt: skip
        if row.kind == "agent":
            document = self.document
            entry = document.get(row.loc) if document is not None else None
            name = entry.get("name") if isinstance(entry, dict) else None
            agent = entry.get("agent") if isinstance(entry, dict) else None
            label = f"  {str(row.table)[:-1]} {row.label}"
            found = self._found.get(row.key)
            if found is None:
                note = ("checking its program…", "dim")
            elif found[0]:
                note = (f"✓ found {found[1]}", "green")
            else:
                note = (f"✗ {found[1]}", "red")
            return (label, "bold"), (str(name or agent or ""), "bold"), note
        assert row.spec is not None
        value = self._value(row)
        if value is None:
            shown = (f"default: {row.spec.default}" if row.spec.default else "", "dim")
        else:
            shown = (show_value(row.spec.kind, value), "")
        problem = self._local.get(row.key) or "; ".join(self._problems.get(row.key, []))
        note = (f"✗ {problem}", "bold red") if problem else (row.spec.help, "dim")
        key_style = "bold red" if problem else ""
        return (f"{indent}{row.label}", key_style), shown, note

    def _find_problems(self) -> dict[str, list[str]]:
        """Each problem of the document on the row of its key; the rest go above the table."""
        document = self._shown_document
        found: dict[str, list[str]] = {}
        general: list[str] = []
        for problem in document.problems() if document is not None else []:
            row = self._row_for(problem.key)
            if row is None:
                general.append(str(problem))
            elif problem.key.startswith(f"{row}."):  # a key inside a price's table
                inside = problem.key.removeprefix(f"{row}.")
                found.setdefault(row, []).append(f"{inside}: {problem_text(problem)}")
            else:
                found.setdefault(row, []).append(problem_text(problem))
        self._general = general
        shown = self.query_one("#config-problems", Static)
        shown.display = bool(general)
        shown.update(Text(inert("\n".join(general)), style="red"))
        return found

    def problem_count(self) -> int:
        """How many problems the form lists: above the table, and beside each key (a key
        whose text cannot be read shows that one instead of the document's)."""
        beside = sum(
            1 if key in self._local else len(self._problems.get(key, []))
            for key in self._local.keys() | self._problems.keys()
        )
        return len(self._general) + beside

    def _row_for(self, key: str) -> str | None:
        if key in self._rows:
            return key
        match = _AGENT.match(key)
        if match:
            options = dotted((match.group(1), int(match.group(2)), OPTIONS.key))
            return options if options in self._rows else None
        # A model's name may hold dots itself: its row is the longest that leads the key.
        prices = [
            row
            for row, spec in self._rows.items()
            if spec.loc[:1] == PRICES and len(spec.loc) == 2 and key.startswith(f"{row}.")
        ]
        return max(prices, key=len, default=None)

    def _redraw(self) -> None:
        """Validate again and change only the cells that changed."""
        self._problems = self._find_problems()
        table = self.table
        with self.app.batch_update():
            for key, row in self._rows.items():
                cells = self._cells(row)
                old = self._shown.get(key)
                if cells == old:
                    continue
                for column, new, was in zip(("key", "value", "note"), cells,
                                            old or ((), (), ()), strict=True):  # fmt: skip
                    if new != was:
                        table.update_cell(key, column, _cell(*new))
                self._shown[key] = cells
        self._show_status()
        self._show_detail(self._highlighted())

    def _show_status(self) -> None:
        status = Text(display_path(self.session.config_path), style="bold")
        if self.document is None:
            status.append("  cannot be edited here until it is valid TOML:\n", style="bold red")
            status.append(inert(self._load_error or ""), style="red")
            self.query_one("#config-status", Static).update(status)
            return
        typing = self._draft is not None or dotted(self.editor.loc) in self._local
        if self.editor.has_class("-open") and typing:
            status.append("  ● being typed: enter keeps it", style="bold yellow")
        elif self.document.modified:
            status.append("  ● unsaved changes", style="bold yellow")
            status.append(" — ctrl+s saves, ctrl+r reverts", style="dim")
        else:
            status.append("  ✓ saved", style="green")
        problems = self.problem_count()
        if problems:
            status.append(f"  ⚠ {look.plural(problems, 'problem')}", style="bold red")
        status.append("\nenter edits the highlighted key and checks it as you type; a blank "
                      "value removes the key, so its default applies.", style="dim")  # fmt: skip
        self.query_one("#config-status", Static).update(status)

    @on(DataTable.RowHighlighted, "#config-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(str(event.row_key.value))

    def _show_detail(self, key: str | None) -> None:
        """The highlighted key's note in full, since the table cuts long ones."""
        row = self._rows.get(key) if key is not None else None
        detail = self.query_one("#config-detail", Static)
        if row is None:
            detail.update("")
            return
        (label, _), _, (note, style) = self._shown.get(row.key) or self._cells(row)
        head = Text(inert_line(dotted(row.loc) if row.loc else label.strip()), style="bold")
        detail.update(Text.assemble(head, "  ", (inert_line(note), style)))

    # --- editing -------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#config-table")
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = self._rows.get(str(event.row_key.value))
        if row is None:
            return
        if row.kind == "add" and row.table is not None:
            self.action_add_agent(row.table)
        elif row.kind in ("field", "add") and (row.spec is not None or row.key == ADD_PRICE):
            if self.session.watching:
                self.notify("Following another run: this view is read-only.")
                return
            self._naming = None
            self.editor.open(row.loc, row.spec or NEW_PRICE, self._value(row))

    @on(FieldEditor.Edited)
    def _edited(self, event: FieldEditor.Edited) -> None:
        """Try what is typed on a copy of the document; the document itself waits for enter."""
        event.stop()
        if event.loc == PRICES:
            self._naming = event.value.strip() if isinstance(event.value, str) else None
            return
        key = dotted(event.loc)
        self._local.pop(key, None)
        self._forget_draft()
        document = self.document
        spec = self.editor.spec
        typed = spec is not None and spec.kind not in ("bool", "choice")
        if document is None:
            return
        if event.error is not None:
            self._local[key] = event.error
        elif event.value is None and typed:
            self._blank = key
            default = f" ({spec.default})" if spec is not None and spec.default else ""
            self._local[key] = f"empty: type a value, or enter removes the key{default}"
        else:
            draft = document.copy()
            error = _apply(draft, event.loc, event.value)
            if error is not None:
                self._local[key] = error
            else:
                self._draft, self._draft_document = (event.loc, event.value), draft
        self._redraw()

    def _forget_draft(self) -> None:
        self._draft = self._draft_document = self._blank = None

    def _end_edit(self, loc: Loc, *, kept: bool) -> None:
        """Enter puts the typed value into the document (an empty box removes the key, so
        its default applies); escape leaves the document as it was."""
        key = dotted(loc)
        draft, blank = self._draft, self._blank
        self._forget_draft()
        document = self.document
        if not kept:
            self._local.pop(key, None)
        elif document is not None and draft is not None:
            _apply(document, *draft)
        elif document is not None and blank == key:
            self._local.pop(key, None)
            _apply(document, loc, None)
        self.editor.close()
        self._redraw()
        self.table.focus()

    @on(FieldEditor.Finished)
    def _finished(self, event: FieldEditor.Finished) -> None:
        event.stop()
        if event.loc == PRICES:
            self._price_named(self._naming if event.kept else None)
            return
        self._end_edit(event.loc, kept=event.kept)
        loc = event.loc
        if loc and loc[0] in AGENT_TABLES and len(loc) > 1:
            agent = self._rows.get(dotted(loc[:2]))
            if agent is not None:
                self._check(agent)

    def _price_named(self, model: str | None) -> None:
        """After "+ add price": the model's row, its price being edited (the document
        gets the price, not the name alone)."""
        self._naming = None
        self.editor.close()
        self.table.focus()
        if not model:
            return
        loc = (*PRICES, model)
        if dotted(loc) not in self._rows:
            self._added_prices = (*self._added_prices, model)
            self._rebuild()
        self.table.move_cursor(row=self.table.get_row_index(dotted(loc)))
        self.editor.open(loc, price_spec(model), self._value(self._rows[dotted(loc)]))

    # --- agents --------------------------------------------------------------------------

    def action_new_agent(self) -> None:
        """One key adds either kind of agent: the question says which."""
        question = Choice(
            "New agent",
            "Add a contestant (races on every task and writes tests) or an examiner "
            "(only writes tests)?",
            [
                ("contestants", "Contestant", "primary"),
                ("examiners", "Examiner", "default"),
                ("cancel", "Cancel", "default"),
            ],
        )

        def answered(answer: str | None) -> None:
            if answer in ("contestants", "examiners"):
                self.action_add_agent(answer)

        self.app.push_screen(question, answered)

    def action_add_agent(self, table: str) -> None:
        document = self.document
        if document is None:
            return
        which: AgentTable = "examiners" if table == "examiners" else "contestants"
        index = document.add_agent(which, {"agent": "claude-code"})
        self._rebuild()
        self.table.move_cursor(row=self.table.get_row_index(dotted((which, index, "agent"))))
        self.notify(f"Added {which[:-1]} #{index + 1}; enter on a key edits it.")

    def action_remove_agent(self) -> None:
        document = self.document
        key = self._highlighted()
        row = self._rows.get(key) if key is not None else None
        if document is None or row is None or row.table is None or row.index < 0:
            self.notify("Highlight a key of the agent to remove.")
            return
        document.remove_agent(row.table, row.index)
        self._found = {k: v for k, v in self._found.items() if not k.startswith(row.table)}
        self._rebuild()
        self.notify(f"Removed {row.table[:-1]} #{row.index + 1} (not saved yet).")

    def _check(self, row: FormRow) -> None:
        document = self.document
        entry = document.get(row.loc) if document is not None else None
        if isinstance(entry, dict) and row.table is not None:
            self._check_agent(row.table, row.index, entry)

    @work(thread=True, group="agent-check", exit_on_error=False)
    def _check_agent(self, table: str, index: int, entry: dict[str, Any]) -> None:
        """Build the agent's adapter and look for its program, as `bugbout doctor` does."""
        try:
            program = agent_from_config(entry).command()
        except BugboutError as exc:
            self.post_message(self.AgentChecked(table, index, False, exc.message))
        else:
            self.post_message(self.AgentChecked(table, index, True, program))

    @on(AgentChecked)
    def _agent_checked(self, message: AgentChecked) -> None:
        key = dotted((message.table, message.index))
        if key in self._rows:
            self._found[key] = (message.found, message.text)
            self._redraw()

    # --- saving --------------------------------------------------------------------------

    def save(self) -> bool:
        """Write the document if it is valid; True when it was written."""
        document = self.document
        if document is None:
            return False
        if self.session.watching:
            self.notify("Following another run: this view is read-only.", severity="warning")
            return False
        if self.editor.has_class("-open"):
            self._end_edit(self.editor.loc, kept=True)  # ctrl+s keeps what is typed, as enter
        if self._local:
            self.notify("Not saved: fix the keys marked in red first.", severity="error")
            return False
        try:
            document.save()
        except ConfigError as exc:
            count = len(exc.problems)
            self.notify(
                f"Not saved: {look.plural(count, 'problem')}, shown beside the keys.",
                severity="error",
            )
            return False
        except (BugboutError, OSError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", markup=False)
            return False
        self.notify("Saved bugbout.toml; comments and order are kept.")
        self._redraw()
        self.session.config_saved()
        return True

    def discard(self) -> None:
        """Forget the edits: read the file again."""
        self.editor.close()
        self._load()

    def action_save(self) -> None:
        self.save()

    def action_revert(self) -> None:
        self.discard()
        self.notify("Read bugbout.toml again from disk.")

    def show_records(self) -> None:
        """bugbout.toml may have been written by another screen: show the file's state."""
        document = self.document
        if document is None or document.modified:
            return
        try:
            on_disk = self.session.config_path.read_text(encoding="utf-8")
        except OSError:
            return
        if on_disk != document.text:
            self._load()
        else:
            self._redraw()


def _apply(document: ConfigDocument, loc: Loc, value: Any) -> str | None:
    """Put a value into `document`; the options row sets each option key, a price row
    each key of the model's price. Returns why the value cannot go there, or None."""
    if loc[-1] == OPTIONS.key and loc[0] in AGENT_TABLES:
        if value is not None and not isinstance(value, dict):
            return 'must be a TOML table, e.g. { effort = "high" }'
        agent = loc[:-1]
        _merge(document, agent, agent_options(document, agent), value or {})
        return None
    if loc[:1] == PRICES and len(loc) == 2:
        if value is not None and not isinstance(value, dict):
            return "must be a TOML table, e.g. { input = 1.25, output = 10.0 }"
        current = document.get(loc)
        if value is not None and isinstance(current, dict):
            _merge(document, loc, current, value)  # key by key, so comments stay
            return None
    if document.get(loc) != value:
        document.set(loc, value)
    return None


def _merge(document: ConfigDocument, table: Loc, current: dict[str, Any], wanted: Any) -> None:
    """Set the keys of `table` to `wanted`, touching only those that change."""
    for name in current:
        if name not in wanted:
            document.set((*table, name), None)
    for name, item in wanted.items():
        if current.get(name) != item:
            document.set((*table, name), item)
