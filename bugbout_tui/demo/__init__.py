"""The built-in demo bout: a sample project with real fixed bugs, and scripted agents."""
