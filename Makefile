# Everything a fresh machine needs: `make run` and `make test` create .venv and install into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BUILT  := $(VENV)/.core-built
#: pytest-xdist's workers for `make test` and `make check`: the suite mostly waits (daemon
#: processes, Chromium, PostgreSQL), so four share two cores well.
WORKERS ?= 4
#: The sources setup.py compiles (and their packages' __init__.py, which cost nothing to add).
CORE   := controller/core/cards.py controller/core/records.py controller/core/events.py \
          controller/core/table_events.py controller/core/table_settings.py \
          $(wildcard controller/core/rankings/*.py controller/core/games/*.py) \
          controller/par/three_card_lowball.py

.PHONY: run test check bench clean deps build-deps pure compiled

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The install compiles the game core with mypyc (setup.py; it needs gcc and the Python
# headers): about 40 seconds more on a fresh machine.
$(STAMP): pyproject.toml setup.py | $(BIN)/python build-deps
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(BUILT)

# Compiled modules sit beside their sources (editable install) and are imported in their
# place, so a core source edited since the last build is compiled again before anything runs.
# After `make pure` there is nothing compiled, and nothing to rebuild.
# (A first install has just built the core and touched $(BUILT): nothing is newer then.)
$(BUILT): $(CORE) | $(STAMP)
	@if [ -n "$$(find controller -name '*.so')" ] && \
	    { [ ! -e $(BUILT) ] || [ -n "$$(find $(CORE) -newer $(BUILT))" ]; }; then \
	  echo "rebuilding the compiled game core (sources changed)"; \
	  $(BIN)/python -m pip install --quiet --no-deps -e .; fi
	touch $(BUILT)

run: $(BUILT)
	$(BIN)/lowball-table demo

# gcc and the Python headers compile the game core: installed from Debian's packages when
# missing and we are root (as in CI); otherwise the install would fail, so say how.
build-deps:
	@if ! command -v gcc >/dev/null || ! $(PYTHON) -c "import os, sysconfig, sys; \
	    sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc python3-dev; \
	  else echo "the build needs gcc and the Python headers: sudo apt-get install gcc python3-dev (or sudo make build-deps), or LOWBALL_PURE_PYTHON=1 make ..." >&2; fi; \
	fi

# systemd-analyze and systemd-sysusers check the unit files (tests/systemd), PostgreSQL's
# initdb and pg_ctl start the floor tests' throwaway cluster (tests/floor), and Chromium is
# the browser of the console's tests (tests/console, driven by Playwright, which never
# downloads a browser here): installed from Debian's packages when missing and we are root
# (as in CI); otherwise those tests say how.
deps:
	@if ! command -v systemd-analyze >/dev/null || ! command -v systemd-sysusers >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd; \
	  else echo "tests/systemd need systemd: sudo apt-get install --no-install-recommends systemd (or sudo make deps)" >&2; fi; \
	fi
	@if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql; \
	  else echo "tests/floor need PostgreSQL: sudo apt-get install --no-install-recommends postgresql (or sudo make deps)" >&2; fi; \
	fi
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; \
	  else echo "tests/console need Chromium: sudo apt-get install --no-install-recommends chromium (or sudo make deps)" >&2; fi; \
	fi

# Everything, on every core (pytest-xdist): a group (xdist_group) stays on one worker.
# docs/testing.md: the layout, the tiers and how to run one subsystem.
test: $(BUILT) deps
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadgroup

# The inner loop: the fast tier (no daemon process, browser, PostgreSQL or slow test).
check: $(BUILT)
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadgroup -m "not slow and not daemon and not browser and not postgres"

bench: $(BUILT)
	$(BIN)/python -m bench

# `make pure`: the same sources run as plain Python (compiled modules removed, none built);
# `make compiled` builds them again.
pure: $(STAMP)
	find controller -name '*.so' -delete; rm -f *__mypyc*.so
	LOWBALL_PURE_PYTHON=1 $(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(BUILT)

compiled: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(BUILT)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist *.egg-info
	find controller -name '*.so' -delete; rm -f *__mypyc*.so
