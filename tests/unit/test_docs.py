"""Every link between the documentation's pages leads somewhere: the page exists, and so
does the heading it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors a page's headings get, as GitHub makes them."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found = set()
    for line in text.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text) if "://" not in target]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_between_pages_leads_somewhere(page: Path) -> None:
    broken = []
    for target in links(page):
        if target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{page.name}: " + "; ".join(broken)


PACKAGE = ROOT / "bugbout_tui"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SAMPLE_DATA = ("demo/invoicekit", "demo/playbooks", "demo/history", "demo/lite/")
"""The demo's sample projects: package data the page names as folders, not modules."""
NAMED = re.compile(r"`((?:[a-z_]+/)+[\w.-]*)`")


def modules_with_a_job() -> set[str]:
    """Every module of the package, but a package file that only re-exports names."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith(SAMPLE_DATA):
            continue
        if path.name in ("__init__.py", "__main__.py"):
            defined = re.findall(r"^(?:async )?(?:def|class) (\w+)", path.read_text(), re.M)
            if set(defined) <= {"__getattr__"}:
                continue
        found.add(name)
    return found


def test_the_architecture_page_names_every_module_and_only_what_exists() -> None:
    named = set(NAMED.findall(ARCHITECTURE.read_text(encoding="utf-8")))
    missing = sorted(modules_with_a_job() - named)
    assert not missing, f"docs/architecture.md does not say what these do: {missing}"
    gone = sorted(
        name
        for name in named
        if name.endswith((".py", "/"))
        and not (PACKAGE / name).exists()
        and not (ROOT / name).exists()
    )
    assert not gone, f"docs/architecture.md names files that do not exist: {gone}"
