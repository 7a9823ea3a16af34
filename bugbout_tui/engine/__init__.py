"""The engine: the pipeline over the stages, the scheduler and the events it speaks in."""
