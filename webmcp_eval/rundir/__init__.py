"""The run directory, the hand-off from playing to reporting: plan.json, traces, attempts, run.json, their readers."""
