"""Benchmarks and measuring tools, run by hand or by ``make``: nothing in
production imports this package (``python -m harness.bench`` is the
throughput benchmark). Kept free of imports: the benchmark bots in
``bots/`` ship this file with them."""
