"""Customer names with accented letters keep those letters, without accents, in slugs."""

from invoicekit.slug import slugify


def test_accented_letters_lose_only_their_accents():
    assert slugify("Café Olé") == "cafe-ole"
    assert slugify("Müller & Söhne") == "muller-sohne"
    assert slugify("Ñandú Ltd") == "nandu-ltd"


def test_plain_names_are_unchanged():
    assert slugify("ACME Corp.") == "acme-corp"
    assert slugify("INV-0042") == "inv-0042"
