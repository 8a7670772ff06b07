"""On-demand benchmarks (``make bench``); the README quotes their figures."""
