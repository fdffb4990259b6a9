"""The demo events site that webmcp-eval's seed case suite runs against."""
