# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint venv bench bench-engines search-check golden clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/league run leagues/demo.toml --db results.db
	$(BIN)/league table demo --db results.db

# Tests run on TEST_PROCESSES processes at once (pytest-xdist), then the
# `serial` ones alone: the hostile bots, whose attacks reach for every process
# on the machine and whose fork bombs and CPU burners strain its limits.
# worksteal: an idle process takes tests queued for a busy one (tests/conftest.py
# puts the slow ones first in each process's share).
TEST_PROCESSES ?= 2
XDIST := -n $(TEST_PROCESSES) --dist worksteal

# Both groups always run, and the target fails at the end if either did: a
# failure among the first must not hide what the serial ones would report.
test: $(STAMP) lint
	sh scripts/ensure-chromium
	parallel=0; serial=0; \
	$(BIN)/python -m pytest -q $(XDIST) -m "not serial" || parallel=$$?; \
	$(BIN)/python -m pytest -q -m serial || serial=$$?; \
	[ $$parallel -eq 0 ] || echo "make test: the parallel tests failed (exit $$parallel)"; \
	[ $$serial -eq 0 ] || echo "make test: the serial tests failed (exit $$serial)"; \
	[ $$parallel -eq 0 ] && [ $$serial -eq 0 ]

# Static checks, part of `make test`: ruff on everything, mypy on the harness,
# the games and the bots, tests aside (pyproject.toml says which).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The edit loop: everything but the slow tests (Ray clusters, hostile bots,
# killed runs, the search's strength, the conformance suite at six and seven
# players; the serial ones are all slow).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m harness.bench

# Engine speed against the engines before this project's speed-ups.
bench-engines: $(STAMP)
	$(BIN)/python -m games.bench --baseline-git 4dfa2d2

# The search bot in real leagues at the default limits, every game: faults and times.
search-check: $(STAMP)
	$(BIN)/python -m harness.bench.search_check --deals 2

golden: $(STAMP)
	$(BIN)/python -m games.playthrough --write --dir tests/golden

clean:
	rm -rf $(VENV) results.db .pytest_cache
