"""yaml: a placeholder for the name people type when they mean PyYAML."""
