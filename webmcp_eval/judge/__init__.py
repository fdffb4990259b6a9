"""Judging a trial: code checks over the trace and the page, model graders, and people's labels."""
