"""The Verdicts screen: the judge's pick (or abstention) per task, rule by rule.

Verdicts are recomputed from the stored matrices under all five policies when the store
is read, so switching the policy here shows its verdicts at once, and saving it makes it
the project's `[judge] policy`. The table gives up detail only as far as the width asks
(`tui.verdict_table`). Test, author and patch names and the judge's reasons
(which quote them) are shown inert; the nodes keep the names themselves to find cells.

An environment task has no matrix and no policy: the env judge picks among its repairs
from what each shows of itself (`rules.env_judge`), so its row gives the same pick under
every policy (its row says it once), and its trail is that judge's: the candidates, the
pick order, the merge gate and the task's controls.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static, Tree
from textual.widgets.tree import TreeNode

from bugbout_tui.core import look
from bugbout_tui.core.config import Policy
from bugbout_tui.core.config_doc import ConfigDocument
from bugbout_tui.core.env_models import Repair
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import BASE, GOLD, Resolution
from bugbout_tui.core.text import inert_line
from bugbout_tui.report.env_build import control_problem
from bugbout_tui.rules.env_judge import EnvVerdict, RankedRepair, f1_text
from bugbout_tui.rules.env_judge import share as safe_share
from bugbout_tui.rules.judge import (
    POLICIES,
    THRESHOLD,
    Assessment,
    Breakage,
    CellRef,
    Verdict,
)
from bugbout_tui.tui.env_view import failure_words
from bugbout_tui.tui.records import Records
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.screens.cell import CellScreen
from bugbout_tui.tui.verdict_table import CELL_PADDING, patch_label, verdict_table


def ranked_label(place: int, ranked: RankedRepair) -> Text:
    """One candidate as the pick order reads it: safe install, F1, size, then whether
    the merge gate would let it through."""
    label = Text.assemble(
        (f"{place}. ", "bold"),
        (inert_line(ranked.contestant), "bold"),
        f": safe install {safe_share(ranked.safe_install)} · F1 {f1_text(ranked.f1)} · "
        f"{look.plural(ranked.size, 'line')} · ",
    )
    if ranked.blockers:
        label.append("gate ✗ ", style="bold red")
        label.append(inert_line("; ".join(ranked.blockers)), style="red")
    else:
        label.append("gate ✓", style="bold green")
    return label


def _repair_label(name: str, repair: Repair) -> Text:
    label = Text.assemble((inert_line(name), "bold"), ": ", look.repair(repair.status).badge())
    why = failure_words(repair)
    if why and not repair.resolved:
        label.append(f": {inert_line(why)}", style="dim")
    if repair.rejected_files:
        label.append(f" ({inert_line(', '.join(repair.rejected_files))})", style="dim")
    return label


def fill_env_trail(
    tree: Tree[CellRef | None],
    verdict: EnvVerdict,
    repairs: dict[str, Repair],
    controls: dict[str, Repair],
) -> None:
    """The env judge's trail on one task: the candidates, the pick, the merge gate, the
    ranking and the controls that make the task count."""
    tree.clear()
    root = tree.root
    head = Text.assemble((inert_line(verdict.task), "bold"), ": ")
    if verdict.pick is None:
        head.append("abstains", style="bold yellow")
    else:
        head.append(f"picks {inert_line(verdict.pick)}", style="bold green")
        if verdict.approved:
            head.append(" — the merge gate approves", style="green")
        else:
            head.append(" — the merge gate refuses", style="red")
    head.append(" · an environment repair: the env judge, no matrix, no policy", style="dim")
    root.set_label(head)
    trail = [inert_line(step) for step in verdict.trail]
    candidates = root.add(Text.assemble(("step 1 · candidates", "bold"), ": ", trail[0]),
                          expand=True)  # fmt: skip
    for name in sorted(repairs):
        candidates.add_leaf(_repair_label(name, repairs[name]))
    if verdict.pick is not None:
        order = root.add(
            Text.assemble(("step 2 · the pick", "bold"), ": ", trail[1] if len(trail) > 1 else ""),
            expand=True,
        )
        order.add_leaf(Text("safest first, then most faithful (F1), then the smallest change",
                            style="dim"))  # fmt: skip
        for place, ranked in enumerate(verdict.ranking, start=1):
            order.add_leaf(ranked_label(place, ranked))
        gate = root.add(
            Text.assemble(("step 3 · the merge gate", "bold"), ": ", trail[-1]), expand=True
        )
        picked = next((r for r in verdict.ranking if r.contestant == verdict.pick), None)
        for blocker in picked.blockers if picked is not None else []:
            gate.add_leaf(Text(inert_line(blocker), style="red"))
    controls_node = root.add(Text("controls: what makes the task count", style="bold"),
                             expand=True)  # fmt: skip
    for name in (BASE, GOLD):
        control = controls.get(name)
        if control is None:
            controls_node.add_leaf(Text(f"{name}: not made yet", style="dim"))
        else:
            controls_node.add_leaf(_repair_label(name, control))
    problem = control_problem(controls)
    if problem is not None:
        controls_node.add_leaf(Text(f"the report leaves it out: {problem}", style="yellow"))
    root.expand()


def cell_label(ref: CellRef) -> Text:
    where = "base" if ref.tree == "base" else f"patch {inert_line(ref.tree)}"
    return Text.assemble(
        (inert_line(ref.test), ""), "  ", (inert_line(ref.author), "cyan"), " on ", (where, "bold"),
        ": ",
        look.outcome_text(ref.outcome),
    )  # fmt: skip


def _add_cells(node: TreeNode[CellRef | None], cells: list[CellRef]) -> None:
    for ref in cells:
        node.add_leaf(cell_label(ref), data=ref)


def picked_words(verdict: Verdict) -> str:
    """`picks careful`, or `picks careful #2's patch` when careful ran several trials:
    which trial's patch it was is the point of picking among them."""
    assert verdict.pick is not None
    label = patch_label(verdict.pick, verdict)
    return f"picks {label}" if label == verdict.pick else f"picks {label}'s patch"


def _assessment_label(assessment: Assessment, picked: bool, verdict: Verdict) -> Text:
    mark, style = ("✓ ", "bold green") if assessment.approved else ("✗ ", "bold red")
    shown = patch_label(assessment.patch, verdict)
    label = Text.assemble((mark, style), (inert_line(shown), "bold"))
    if picked:
        label.append(" (the pick)", style="bold green")
    label.append(f": {'approved' if assessment.approved else 'rejected'} — ")
    label.append(inert_line(assessment.reason))
    return label


def fill_trail(tree: Tree[CellRef | None], verdict: Verdict, records: Records) -> None:
    """The rule trail of one verdict, with the cells behind each step as leaves."""
    tree.clear()
    root = tree.root
    root.set_label(_trail_head(verdict, records))
    _add_reproductions(root, verdict)
    step = 2
    if verdict.witnesses is not None:
        _add_credibility(root, verdict, step)
        step += 1
    _add_patches(root, verdict, step)
    step += 1
    if verdict.decided_by is not None:
        root.add_leaf(
            Text.assemble((f"step {step} · the pick", "bold"), ": ", inert_line(verdict.decided_by))
        )
        step += 1
    scored = [(a.patch, records.resolution(verdict.task, a.patch)) for a in verdict.assessments]
    if any(resolution is not None for _, resolution in scored):
        truth = root.add(
            Text.assemble((f"step {step} · the maintainers' hidden tests", "bold"),
                          ": whether each patch really fixed the bug"),
            expand=True,
        )  # fmt: skip
        for patch, resolution in scored:
            status = look.resolution(resolution.status if resolution is not None else "not scored")
            truth.add_leaf(Text.assemble((inert_line(patch), "bold"), ": ", status.label()))
    root.expand()


def _trail_head(verdict: Verdict, records: Records) -> Text:
    head = Text.assemble(
        (inert_line(verdict.task), "bold"), " under ", (verdict.policy, "bold cyan"), ": "
    )
    if verdict.pick is not None:
        head.append(inert_line(picked_words(verdict)), style="bold green")
        resolution = records.resolution(verdict.task, verdict.pick)
        if resolution is not None:
            right = resolution.status == "resolved"
            head.append(
                f" — the hidden tests say {resolution.status}"
                + (" (right)" if right else " (wrong)"),
                style="green" if right else "red",
            )
    else:
        head.append("abstains: ", style="bold yellow")
        head.append(inert_line(verdict.abstained or ""))
    return head


def _add_reproductions(root: TreeNode[CellRef | None], verdict: Verdict) -> None:
    """Step 1: every test that fails on the unfixed code, by author; under `credible` an
    author given no weight says so (step 2 says why)."""
    reps = {author: tests for author, tests in verdict.reproductions.items() if tests}
    unweighted = {name for discount in verdict.discounted for name in discount.reproductions}
    count = sum(len(tests) for tests in reps.values())
    repro_node = root.add(
        Text.assemble(
            ("step 1 · reproductions", "bold"),
            f": {look.plural(count, 'test')} by {look.plural(len(reps), 'author')} "
            f"{look.verb(count, 'fails', 'fail')} on the unfixed code",
        ),
        expand=True,
    )
    for author, tests in sorted(reps.items()):
        label = Text.assemble((inert_line(author), "cyan"), f": {look.plural(len(tests), 'test')}")
        if author in unweighted:
            label.append(" · given no weight", style="yellow")
        author_node = repro_node.add(label)
        _add_cells(
            author_node,
            [CellRef(tree="base", author=author, test=test, outcome="failed") for test in tests],
        )
    if not reps:
        repro_node.add_leaf(Text("none: no test by a contestant or examiner fails there",
                                 style="dim"))  # fmt: skip


def _add_credibility(root: TreeNode[CellRef | None], verdict: Verdict, step: int) -> None:
    """`credible`'s own step: whose reproductions it gave no weight and which patches
    vote in the breakage quorum, with the judge's sentences saying why."""
    witnesses = verdict.witnesses or []
    unweighted = [discount.author for discount in verdict.discounted]
    node = root.add(
        Text.assemble(
            (f"step {step} · whose evidence counts", "bold"),
            ": ",
            f"{look.plural(len(unweighted), 'author')} given no weight"
            if unweighted
            else "every author's reproductions count",
            "; breakage quorum: ",
            inert_line(", ".join(witnesses)) or "no patch",
            f" (support of at least {float(THRESHOLD)})",
        ),
        expand=True,
    )
    if not unweighted:
        node.add_leaf(Text("each author has a reproduction that a patch by another author "
                           "passes", style="dim"))  # fmt: skip
    for note in verdict.notes:
        node.add_leaf(Text(inert_line(note)))


def _add_patches(root: TreeNode[CellRef | None], verdict: Verdict, step: int) -> None:
    """Each patch on its own: who may vouch for it, its support, its breakages."""
    credible = verdict.witnesses is not None
    keepers = "other supported patches" if credible else "other patches"
    # Under credible, who counts depends on the other patches, so "alone" would mislead.
    how = "each on the evidence that counts" if credible else "each judged alone"
    patches = root.add(
        Text.assemble(
            (f"step {step} · patches", "bold"),
            f": {look.plural(len(verdict.assessments), 'patch', 'patches')}, {how}",
        ),
        expand=True,
    )
    for assessment in verdict.assessments:
        node = patches.add(_assessment_label(assessment, assessment.patch == verdict.pick, verdict))
        independent = inert_line(", ".join(assessment.independent)) or "none"
        node.add_leaf(Text.assemble(("independent authors: ", "bold"), independent))
        counted = "independent authors given weight" if credible else "independent authors"
        support = node.add(
            Text.assemble(
                ("support: ", "bold"),
                "none" if assessment.support is None else f"{assessment.support:.2f}",
                f" (mean over {counted} of the share of their reproductions that pass)",
            )
        )
        for author, share in sorted(assessment.support_by_author.items()):
            support.add_leaf(Text.assemble((inert_line(author), "cyan"), f": {share:.2f}"))
        breaks = node.add(
            Text.assemble(
                ("breakages: ", "bold"),
                f"{len(assessment.breakages)} found, {assessment.counted_breakages} counted "
                f"(counted when most {keepers} keep the test passing)",
            )
        )
        for breakage in assessment.breakages:
            item = breaks.add(breakage_label(breakage, keepers))
            _add_cells(item, breakage.cells)
        cells = node.add(Text.assemble(("cells behind this decision", "bold"),
                                       f": {len(assessment.cells)}"))  # fmt: skip
        _add_cells(cells, assessment.cells)


def breakage_label(breakage: Breakage, keepers: str) -> Text:
    """A breakage with its quorum: how many of the `keepers` (other patches, or under
    `credible` the other supported patches) keep the test passing, and whether it counts."""
    counted = "counted" if breakage.counted else "not counted"
    return Text.assemble(
        (inert_line(breakage.test), ""), "  ", (inert_line(breakage.author), "cyan"),
        f": kept passing by {breakage.kept_by} of {breakage.others} {keepers} — ",
        (counted, "bold red" if breakage.counted else "dim"),
    )  # fmt: skip


class VerdictsScreen(BoutScreen):
    """All policies side by side above; the highlighted task's trail below."""

    MODE = "verdicts"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "next_policy", "Next policy", id="next-policy",
                tooltip="Show the verdicts under the next policy"),
        Binding("w", "save_policy", "Save policy", id="save-policy",
                tooltip="Make the shown policy the project's [judge] policy"),
        Binding("enter", "open_cell", "Open cell", id="open-evidence", show=False),
    ]  # fmt: skip
    WRITES = frozenset({"save_policy"})

    class PolicySaved(Message):
        def __init__(self, policy: Policy, error: str | None) -> None:
            super().__init__()
            self.policy = policy
            self.error = error

    def __init__(self) -> None:
        super().__init__()
        self.policy: Policy | None = None
        self._task_id: str | None = None
        self._fitted_to = 0
        """The screen width the table was last fitted to."""
        self._trail_of: (
            tuple[Verdict, list[Resolution | None]]
            | tuple[EnvVerdict, dict[str, Repair], dict[str, Repair]]
            | None
        ) = None
        """What the trail shows, so a redraw with nothing new keeps what the user opened."""

    def body(self) -> ComposeResult:
        yield Static(id="policy-bar")
        yield DataTable(
            id="verdict-table", cursor_type="row", zebra_stripes=True, cell_padding=CELL_PADDING
        )
        yield Tree[CellRef | None]("", id="verdict-trail")

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#verdict-table", DataTable)

    def _configured(self) -> Policy:
        project = self.session.project
        return project.config.judge.policy if project is not None else "majority"

    def show_records(self) -> None:
        if self.policy is None:
            self.policy = self._configured()
        self._show_bar()
        self._show_table()
        self._show_trail()

    def _show_table(self) -> None:
        """Every task under every policy, in as much detail as the width allows; the
        cursor stays on the task it was on."""
        assert self.policy is not None
        table = self.table
        room = self.size.width - table.styles.scrollbar_size_vertical
        shown = verdict_table(self.session.records, self.policy, room)
        self._fitted_to = self.size.width
        keep = self._task_id
        with self.app.batch_update():
            table.clear(columns=True)
            keys = ["task", *POLICIES]
            for key, heading in zip(keys, shown.headings, strict=True):
                table.add_column(heading, key=key)
            for task, cells in shown.rows.items():
                table.add_row(*cells, key=task)
            if keep in shown.rows:
                table.move_cursor(row=table.get_row_index(keep))
        tasks = list(shown.rows)
        self._task_id = keep if keep in shown.rows else (tasks[0] if tasks else None)

    def on_resize(self) -> None:
        if self.drawable and self.policy is not None and self._fitted_to != self.size.width:
            self._show_table()

    def _show_bar(self) -> None:
        """The shown policy and the project's, by name: the table's headings may be
        shortened, and which policy is saved is not in the table at all."""
        assert self.policy is not None
        configured = self._configured()
        bar = Text.assemble(
            ("showing ", "bold"), (f" {self.policy} ", "bold reverse cyan"),
            " · [judge] policy: ", (configured, "bold"),
            (" · p next · w save", "dim"),
        )  # fmt: skip
        self.query_one("#policy-bar", Static).update(bar)

    def _show_trail(self) -> None:
        trail: Tree[CellRef | None] = self.query_one("#verdict-trail", Tree)
        records = self.session.records
        env_verdict = records.env_verdicts.get(self._task_id or "")
        if env_verdict is not None:
            task = env_verdict.task
            env_shown = (env_verdict, records.task_repairs(task), records.env_controls(task))
            if env_shown != self._trail_of:
                self._trail_of = env_shown
                fill_env_trail(trail, *env_shown)
            return
        verdicts = records.verdicts.get(self._task_id or "")
        if verdicts is None or self.policy is None:
            self._trail_of = None
            trail.clear()
            trail.root.set_label(
                Text(
                    "No verdict yet: the judge reads each task's cross-examination matrix, "
                    "which is built after the race.",
                    style="yellow",
                )
            )
            return
        verdict = verdicts[self.policy]
        shown = (verdict, [records.resolution(verdict.task, a.patch) for a in verdict.assessments])
        if shown != self._trail_of:
            self._trail_of = shown
            fill_trail(trail, verdict, records)

    @on(DataTable.RowHighlighted, "#verdict-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        task = str(event.row_key.value)
        if task != self._task_id:
            self._task_id = task
            self._show_trail()

    @on(Tree.NodeSelected, "#verdict-trail")
    def _node_selected(self, event: Tree.NodeSelected[CellRef | None]) -> None:
        ref = event.node.data
        if ref is not None and self._task_id is not None:
            self.app.push_screen(CellScreen(self._task_id, ref.tree, ref.author, test=ref.test))

    def action_open_cell(self) -> None:
        trail: Tree[CellRef | None] = self.query_one("#verdict-trail", Tree)
        node = trail.cursor_node
        if node is not None and node.data is not None and self._task_id is not None:
            ref = node.data
            self.app.push_screen(CellScreen(self._task_id, ref.tree, ref.author, test=ref.test))

    def action_next_policy(self) -> None:
        current = self.policy or self._configured()
        self.policy = POLICIES[(POLICIES.index(current) + 1) % len(POLICIES)]
        self.show_records()

    def action_save_policy(self) -> None:
        if self.session.watching:
            self.notify("Following another run: this view is read-only.", severity="warning")
            return
        if self.policy is not None:
            self._save_policy(self.policy)

    @work(thread=True, exclusive=True, group="save-policy", exit_on_error=False)
    def _save_policy(self, policy: Policy) -> None:
        try:
            document = ConfigDocument.load(self.session.config_path)
            document.set(("judge", "policy"), policy)
            document.save()
        except BugboutError as exc:
            self.post_message(self.PolicySaved(policy, str(exc)))
        else:
            self.post_message(self.PolicySaved(policy, None))

    @on(PolicySaved)
    def _policy_saved(self, message: PolicySaved) -> None:
        if message.error is not None:
            self.notify(message.error, title="Not saved", severity="error", markup=False)
            return
        self.notify(f"[judge] policy = {message.policy} saved to bugbout.toml.", markup=False)
        self.session.config_saved()
