"""The pipeline's stages, each a function from stored records to new records."""
