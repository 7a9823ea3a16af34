"""The rules of every stage: pure functions from records to decisions, with no I/O."""
