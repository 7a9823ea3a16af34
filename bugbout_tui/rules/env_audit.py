"""The dependency audit's verdicts over a repair's declared packages, as pure functions.

What each package is (exists, gone, vulnerable, a typo, built at install) is learned by
`infra/env_audit.py`; here that becomes the safe-install share the boards rank by and the
reasons the merge gate gives for refusing a repair. `one_edit_away` lives in `core`,
since the audit needs it below this layer, and is named here with the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from bugbout_tui.core.env_models import Advisory, AuditFinding
from bugbout_tui.core.popular import one_edit_away

__all__ = ["merge_blockers", "one_edit_away", "safe_share"]


def safe_share(findings: Sequence[AuditFinding]) -> float | None:
    """The share of declared packages that are safe (`AuditFinding.safe`: exists, not
    gone, no advisory, pinned, checked); None when nothing is declared."""
    if not findings:
        return None
    return sum(finding.safe for finding in findings) / len(findings)


def merge_blockers(findings: Sequence[AuditFinding]) -> list[str]:
    """Why the merge gate refuses a repair, one sentence per package that blocks it
    (vulnerable, gone, not checked, or a typo of a popular name); empty when nothing
    does."""
    return [_blocker(finding) for finding in findings if finding.blocks_merge]


def _blocker(finding: AuditFinding) -> str:
    what = f"{finding.name}=={finding.pinned}" if finding.pinned else finding.name
    reasons: list[str] = []
    if finding.unchecked is not None:
        reasons.append(f"could not be checked: {finding.unchecked}")
    if finding.exists is False:
        reasons.append("is not on the index (taken down, or never published)")
    elif finding.yanked and finding.pinned:
        reasons.append("was yanked")
    elif finding.removed and finding.pinned:
        reasons.append("is no longer on the index")
    elif finding.removed:
        reasons.append("has no version left that is not yanked")
    if finding.advisories:
        listed = ", ".join(_advisory(advisory) for advisory in finding.advisories)
        reasons.append(f"has published advisories: {listed}")
    if finding.typo_of is not None:
        reasons.append(f"is one edit from the popular {finding.typo_of}: a typo-squat, perhaps")
    return f"{what} " + "; ".join(reasons)


def _advisory(advisory: Advisory) -> str:
    aliases = f" ({', '.join(advisory.aliases)})" if advisory.aliases else ""
    fixed = f", fixed in {', '.join(advisory.fixed_in)}" if advisory.fixed_in else ""
    return f"{advisory.id}{aliases}{fixed}"
