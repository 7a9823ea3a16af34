"""Slugs of customer names with accents (reported: "Café Olé" became "caf-ol")."""

from invoicekit.slug import slugify


def test_reported_name_keeps_its_letters():
    assert slugify("Café Olé") == "cafe-ole"


def test_accented_letters_of_other_languages_keep_their_letters():
    assert slugify("Müller & Söhne") == "muller-sohne"
    assert slugify("Åsa Öberg") == "asa-oberg"


def test_names_without_accents_are_unchanged():
    assert slugify("Northwind Traders") == "northwind-traders"
    assert slugify("Studio 54") == "studio-54"
