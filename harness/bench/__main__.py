"""``python -m harness.bench`` (``make bench``): the throughput benchmark,
harness.bench.throughput."""

from harness.bench.throughput import main

main()
