from invoicekit.slug import slugify


def test_cafe_ole():
    assert slugify("Café Olé") == "cafe-ole"
