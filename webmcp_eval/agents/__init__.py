"""Agents that play a case's user turns: the reference agent, model agents, external harnesses over MCP."""
