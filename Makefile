# Everything a fresh machine needs: `make run` and `make test` create .venv and install into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean deps pure compiled

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The install compiles the game core with mypyc (setup.py): about a minute on a fresh machine.
$(STAMP): pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/lowball-table demo

# systemd-analyze and systemd-sysusers check the unit files (tests/systemd): installed from
# Debian's packages when missing and we are root (as in CI); otherwise those tests say how.
deps:
	@if ! command -v systemd-analyze >/dev/null || ! command -v systemd-sysusers >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd; \
	  else echo "tests/systemd need systemd: sudo apt-get install --no-install-recommends systemd (or sudo make deps)" >&2; fi; \
	fi

test: $(STAMP) deps
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

# `make pure`: the same sources run as plain Python (compiled modules removed, none built);
# `make compiled` builds them again.
pure: $(STAMP)
	find controller -name '*.so' -delete; rm -f *__mypyc*.so
	LOWBALL_PURE_PYTHON=1 $(BIN)/python -m pip install --quiet --no-deps -e .

compiled: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps -e .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist *.egg-info
	find controller -name '*.so' -delete; rm -f *__mypyc*.so
