"""On-demand benchmarks (``make bench``); docs/performance.md quotes their figures."""
