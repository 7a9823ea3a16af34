"""Configuration, stored records and the results store: the layer everything else stands on."""
