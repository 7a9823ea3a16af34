from timesheets import load_entries, render_table, total_hours

WEEK = """\
entries:
  - project: billing
    hours: 3.5
  - project: onboarding
    hours: 4
  - project: billing
    hours: 2
"""


def test_hours_are_summed_per_project():
    assert total_hours(load_entries(WEEK)) == {"billing": 5.5, "onboarding": 4.0}


def test_the_table_has_a_row_per_project():
    lines = render_table(load_entries(WEEK)).splitlines()
    assert lines[0].split() == ["project", "hours"]
    assert [line.split() for line in lines[2:]] == [["billing", "5.5"], ["onboarding", "4.0"]]


def test_an_empty_week_has_no_rows():
    assert total_hours(load_entries("entries:\n")) == {}
