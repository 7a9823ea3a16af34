from datetime import date

import pytest

from slugpages import post_path


def test_a_path_has_the_date_and_the_slug():
    assert post_path("Crème brûlée, at last!", date(2024, 2, 3)) == "/2024/02/creme-brulee-at-last/"


def test_a_long_title_is_cut_at_a_word():
    title = "A very long title about the many reasons we moved our blog to a static site"
    path = post_path(title, date(2024, 2, 3))
    assert path == "/2024/02/a-very-long-title-about-the-many-reasons-we-moved-our-blog/"


def test_a_title_of_punctuation_is_refused():
    with pytest.raises(ValueError):
        post_path("?!", date(2024, 2, 3))
