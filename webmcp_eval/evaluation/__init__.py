"""The commands' core: what each does once its arguments are parsed (webmcp_eval/cli/ parses them)."""
