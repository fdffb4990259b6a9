"""Orchestration: a run (run.py) with its options, shards and retries, and each of its trials (trial.py)."""
