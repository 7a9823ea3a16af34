import pytest

from confsnap import DEFAULTS, SettingsError, load_settings


def test_what_the_file_leaves_out_takes_the_default():
    settings = load_settings("interval: 15\npaths:\n  - /etc/nginx\n  - /etc/ssh\n")
    assert settings == {**DEFAULTS, "interval": 15, "paths": ["/etc/nginx", "/etc/ssh"]}


def test_an_empty_file_is_all_defaults():
    assert load_settings("") == DEFAULTS


def test_a_misspelt_setting_is_refused():
    with pytest.raises(SettingsError, match="intervall"):
        load_settings("intervall: 15\n")
