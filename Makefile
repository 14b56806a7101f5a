# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run serve test test-all test-fast lint venv bench bench-serve bench-ladder bench-matchmaking bench-engines search-check golden datasette clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/league run leagues/demo.toml --db results.db
	$(BIN)/league table demo --db results.db

# The submission site on the demo ladder (README, "A ladder site"): an
# organiser account on first use (its token printed once), then the server.
LADDER_DB ?= ladder.db
serve: $(STAMP)
	$(BIN)/league users list --db $(LADDER_DB) | grep -q '^organiser ' || \
		$(BIN)/league users add organiser --organiser --db $(LADDER_DB)
	$(BIN)/league serve ladders/demo.toml --db $(LADDER_DB)

# Tests run on TEST_PROCESSES processes at once (pytest-xdist), then the
# `serial` ones alone: the hostile bots, whose attacks reach for every process
# on the machine and whose fork bombs and CPU burners strain its limits.
# worksteal: an idle process takes tests queued for a busy one (tests/conftest.py
# puts the slow ones first in each process's share).
TEST_PROCESSES ?= 2
XDIST := -n $(TEST_PROCESSES) --dist worksteal
# The serial run collects only the files that hold serial tests (collecting
# the whole suite to deselect all but them takes seconds).
SERIAL_FILES := $(shell grep -l "mark.serial" tests/test_*.py)

# Both groups always run, and the target fails at the end if either did: a
# failure among the first must not hide what the serial ones would report.
# `make test` leaves out the statistical tier (the search's strength, the
# ratings' and the SPRT's calibration: many simulated matches, minutes of
# CPU); `make test-all` runs everything, and is what CI runs.
test: TIER := and not statistical
test test-all: $(STAMP) lint
	sh scripts/ensure-chromium
	parallel=0; serial=0; \
	$(BIN)/python -m pytest -q $(XDIST) -m "not serial $(TIER)" || parallel=$$?; \
	$(BIN)/python -m pytest -q -m "serial $(TIER)" $(SERIAL_FILES) || serial=$$?; \
	[ $$parallel -eq 0 ] || echo "make test: the parallel tests failed (exit $$parallel)"; \
	[ $$serial -eq 0 ] || echo "make test: the serial tests failed (exit $$serial)"; \
	[ $$parallel -eq 0 ] && [ $$serial -eq 0 ]

# Static checks, part of `make test`: ruff on everything, mypy on the harness,
# the games and the bots, tests aside (pyproject.toml says which).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The edit loop: everything but the slow tests (Ray, clusters, hostile bots,
# killed runs, whole leagues, the statistical tier, the conformance suite at
# six and seven players; the serial ones are all slow).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m harness.bench

# The site: 20 clients submitting and reading at once (latencies, nothing lost),
# then the time from upload to validated for the Python and C kits.
bench-serve: $(STAMP)
	$(BIN)/python -m harness.bench.serve_load
	$(BIN)/python -m harness.bench.serve_load --demo-bots

# The ladder: matches per minute against `league run` on the same bots, a new
# bot's time to a rating; then 50 readers of its pages while it plays.
bench-ladder: $(STAMP)
	$(BIN)/python -m harness.bench.ladder
	$(BIN)/python -m harness.bench.ladder_load

# The matchmaker against uniform random tables, in simulation (docs/matchmaking.md).
bench-matchmaking: $(STAMP)
	$(BIN)/python -m harness.bench.matchmaking

# Engine speed against the engines before this project's speed-ups.
bench-engines: $(STAMP)
	$(BIN)/python -m games.bench --baseline-git 4dfa2d2

# The search bot in real leagues at the default limits, every game: faults and times.
search-check: $(STAMP)
	$(BIN)/python -m harness.bench.search_check --deals 2

golden: $(STAMP)
	$(BIN)/python -m games.playthrough --write --dir tests/golden

# Browse a results file in Datasette (the optional `datasette` extra), with
# its tables described. It serves DB only: the deal keys live in DB.secret.
DB ?= results.db
datasette: $(STAMP)
	$(BIN)/python -c "import datasette" 2>/dev/null || $(BIN)/python -m pip install -q -e '.[datasette]'
	test -f $(DB) || { echo "make datasette: no results file $(DB) (DB=FILE picks another)"; exit 1; }
	$(BIN)/python -c "from harness.store import Store; Store('$(DB)')"  # an older file's keys move out
	$(BIN)/datasette serve $(DB) -m docs/datasette-metadata.json

clean:
	rm -rf $(VENV) results.db results.db.secret ladder.db ladder.db.* .pytest_cache
