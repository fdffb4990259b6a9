"""The page: the shim and tool host that log and call its WebMCP tools, the user's actions, what it shows, witness."""
