"""The options of a requirements file that change where packages come from."""

from __future__ import annotations

import pytest

from bugbout_tui.core.requirement_sources import (
    RequirementOption,
    requirement_options,
    source_change,
)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("--index-url https://mirror.example/simple\nshapes\n", "--index-url"),
        ("shapes\n--extra-index-url=https://mirror.example/simple\n", "--extra-index-url"),
        ("-i https://mirror.example/simple\n", "-i"),
        ("-ihttps://mirror.example/simple\n", "-i"),
        ("-f ./wheels\n", "-f"),
        ("--find-links\thttps://mirror.example/wheels\n", "--find-links"),
        ("--trusted-host mirror.example\n", "--trusted-host"),
        ("  --no-index  \n", "--no-index"),
        ("shapes \\\n    --extra-index-url https://mirror.example/simple\n", "--extra-index-url"),
        ("shapes --no-index\n", "--no-index"),  # where uv would reject it, refused anyway
        ("-e git+https://example.org/shapes.git#egg=shapes\n", "-e"),
        ("--editable=https://example.org/shapes.zip\n", "--editable"),
        ("-r https://example.org/more.txt\n", "-r"),
        ("--constraint=http://example.org/pins.txt\n", "--constraint"),
    ],
)
def test_options_that_change_where_packages_come_from_are_found(text: str, name: str) -> None:
    found = source_change(text)

    assert found is not None and found.name == name


@pytest.mark.parametrize(
    "text",
    [
        "shapes==1.0\nhelper>=2 ; python_version < '3.12'\n",
        "shapes @ https://example.org/shapes-1.0-py3-none-any.whl\n",  # a direct URL: audited
        "helper @ git+https://example.org/helper.git\n",
        "-e .\n-e ./vendor/helper\n",
        "-r requirements-base.txt\n-c constraints.txt\n",
        "shapes==1.0 --hash=sha256:abc\n",
        "--no-binary :all:\n--only-binary shapes\n--pre\n--prefer-binary\n",
        "# --index-url https://mirror.example/simple\nshapes  # --no-index\n",
        "helper @ https://example.org/helper.zip#egg=helper&subdirectory=-i\n",
    ],
)
def test_what_keeps_the_index_is_allowed(text: str) -> None:
    assert source_change(text) is None


def test_options_are_read_with_their_values_and_lines() -> None:
    text = "shapes\n-r base.txt\n--constraint=pins.txt\n\\\n-e .\n# -r hidden.txt\n"

    options = requirement_options(text)

    assert options == [
        RequirementOption(line=2, name="-r", value="base.txt"),
        RequirementOption(line=3, name="--constraint", value="pins.txt"),
        RequirementOption(line=4, name="-e", value="."),
    ]
    assert [o.included for o in options] == ["base.txt", "pins.txt", None]


def test_an_included_url_is_no_file_to_read_but_a_change_of_source() -> None:
    (option,) = requirement_options("-r https://example.org/more.txt\n")

    assert option.changes_source and option.included is None
