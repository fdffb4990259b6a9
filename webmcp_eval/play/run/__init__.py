"""Orchestration: a run (run.py) with its settings and state (settings.py), shards and retries, and each of
its trials (trial.py)."""
