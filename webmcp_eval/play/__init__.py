"""Playing trials, one sub-package per job: run/ (orchestration), browser/, page/, evidence/ (the network's account)."""
