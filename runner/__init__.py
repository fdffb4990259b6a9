"""webmcp-eval: an eval runner for websites that expose tools to AI agents through WebMCP."""

__version__ = "0.1.0"
