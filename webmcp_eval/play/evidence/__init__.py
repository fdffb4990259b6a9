"""The network's evidence: the proxy's account of a trial (network_evidence.py) and fixtures (fixture_store.py)."""
