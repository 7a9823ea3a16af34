from shortlinks import share_link


def test_a_path_with_spaces_is_quoted():
    assert (
        share_link("/guides/getting started/")
        == "https://docs.example.org/guides/getting%20started"
    )


def test_the_campaign_is_quoted_whole():
    link = share_link("faq", campaign="spring/launch")
    assert link == "https://docs.example.org/faq?utm_campaign=spring%2Flaunch"
