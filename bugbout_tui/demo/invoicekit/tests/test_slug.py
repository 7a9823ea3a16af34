from invoicekit.slug import slugify


def test_slugify_lowers_and_joins_words():
    assert slugify("ACME Corp.") == "acme-corp"
    assert slugify("  Northwind   Traders ") == "northwind-traders"


def test_slugify_keeps_digits():
    assert slugify("INV-0042") == "inv-0042"
    assert slugify("Studio 54") == "studio-54"


def test_slugify_spells_accented_letters_without_their_accents():
    assert slugify("Café Olé") == "cafe-ole"
    assert slugify("Müller & Söhne") == "muller-sohne"
    assert slugify("Ñandú Ltd") == "nandu-ltd"
