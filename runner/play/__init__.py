"""Playing trials: the browser and page, the run plan and its shards, one trial from clean state to trace."""
