import pytest

from s3links import object_url

ENDPOINT = "https://s3.eu-west-1.amazonaws.com"


def test_a_key_is_encoded_and_its_folders_kept():
    url = object_url(ENDPOINT, "reports", "2024/q2 summary.pdf")
    assert url == "https://reports.s3.eu-west-1.amazonaws.com/2024/q2%20summary.pdf"


def test_a_local_endpoint_keeps_its_port():
    url = object_url("http://localhost:9000", "scratch", "a.txt")
    assert url == "http://scratch.localhost:9000/a.txt"


def test_an_endpoint_without_a_scheme_is_refused():
    with pytest.raises(ValueError):
        object_url("s3.amazonaws.com", "reports", "a.txt")
