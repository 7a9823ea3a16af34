"""The date-limited view of an index that Python 2's pip installs through."""

from __future__ import annotations

from datetime import UTC, datetime

from bugbout_tui.infra.dated_index import dated_page, upstream_index

PAGE = {
    "name": "Shapes",
    "files": [
        {
            "filename": "shapes-1.0-py2.py3-none-any.whl",
            "url": "/files/shapes-1.0-py2.py3-none-any.whl",
            "hashes": {"sha256": "aa"},
            "upload-time": "2020-01-01T12:00:00.000000Z",
            "requires-python": ">=2.7, !=3.0.*",
        },
        {
            "filename": "shapes-2.0-py3-none-any.whl",
            "url": "https://files.example/shapes-2.0-py3-none-any.whl",
            "hashes": {"sha256": "bb"},
            "upload-time": "2023-01-01T12:00:00Z",
            "yanked": "broken",
        },
        {"filename": "shapes-0.9.tar.gz", "url": "/files/shapes-0.9.tar.gz", "hashes": {}},
    ],
}
BASE = "http://index.example/simple/shapes/"


def test_files_uploaded_after_the_date_are_left_out_unless_their_project_is_lifted() -> None:
    when = datetime(2021, 6, 1, tzinfo=UTC)
    text, undated = dated_page(PAGE, base=BASE, date=when, lifted=())
    assert "shapes-1.0-py2.py3-none-any.whl" in text and "shapes-2.0" not in text
    assert 'href="http://index.example/files/shapes-1.0-py2.py3-none-any.whl#sha256=aa"' in text
    assert 'data-requires-python="&gt;=2.7, !=3.0.*"' in text
    # A file without an upload time cannot be dated: kept, and said.
    assert "shapes-0.9.tar.gz" in text and undated
    lifted, _ = dated_page(PAGE, base=BASE, date=when, lifted={"shapes"})
    assert 'href="https://files.example/shapes-2.0-py3-none-any.whl#sha256=bb"' in lifted
    assert 'data-yanked="broken"' in lifted
    today, undated = dated_page(PAGE, base=BASE, date=None, lifted=())
    assert today.count("<a ") == 3 and not undated


def test_the_view_reads_the_index_the_user_named() -> None:
    assert upstream_index({}) == "https://pypi.org/simple/"
    assert upstream_index({"PIP_INDEX_URL": "http://mirror/pypi"}) == "http://mirror/pypi/"
    both = {"UV_DEFAULT_INDEX": "http://uv/simple", "PIP_INDEX_URL": "http://pip/simple"}
    assert upstream_index(both) == "http://uv/simple/"
