"""Model access shared by agents and graders: provider adapters and recorded model answers (cassettes)."""
