"""The commands' core: what each does once its arguments are parsed (runner/cli/ parses them)."""
