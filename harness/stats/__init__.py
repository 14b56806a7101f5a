"""The statistics: ratings from finishing orders, and the sequential test
(SPRT) with its defaults. Pure computation, no processes and no storage."""
