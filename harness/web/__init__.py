"""The self-contained HTML pages: a league's report and a match's replay,
their JavaScript and CSS kept as files under ``assets/``."""
