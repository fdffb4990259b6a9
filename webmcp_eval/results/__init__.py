"""Results: traces (and plans) in, every figure a report shows out, computed once; statistics and run comparison."""
