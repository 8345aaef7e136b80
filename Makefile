# goboom-env: `make demo` trains and evaluates a small agent; `make test` runs the test suite.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# The torch to install before the extras, so that none of them resolves another build: this machine's local CPU
# wheel by default; elsewhere e.g. make demo TORCH="torch --index-url https://download.pytorch.org/whl/cpu"
TORCH  ?= torch==2.13.0
ALL    := $(VENV)/.installed
FAST   := $(VENV)/.installed-fast
EVERY  := train,rllib,torchrl,tianshou,openspiel,bench,web,docs,dev
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: venv install demo test test-fast test-slow soak browser lint bench docs docs-serve clean

# make venv (make test): every extra; make demo: the fast trainer's extra only, unless every extra is in already.
# --no-compile: Python compiles each module when it is first imported, instead of every module of torch at install
# (the torch wheel installed in 36 s instead of 115 s on the loaded 2-core machine).
define install
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --no-compile $(TORCH)
	$(PIP) install -q --no-compile -e ".[$(1)]"
	touch $@
endef

venv: $(ALL)

$(ALL): pyproject.toml
	$(call install,$(EVERY))

$(FAST): pyproject.toml
	$(call install,fast)

install: venv

demo: $(if $(wildcard $(ALL)),$(ALL),$(FAST))
	$(PY) -m goboom_env.cli demo

test: venv browser
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	GOBOOM_TEST_EVERY_EXTRA=1 $(PY) -m pytest -m "not slow" -n 2 -q

test-slow: venv browser
	GOBOOM_TEST_EVERY_EXTRA=1 $(PY) -m pytest -m slow -n 2 -q

# The soak tests at their full counts (10,000 hands and matches per configuration in the differential soak; CI's
# slow tier plays a sample of each with the same assertions).
soak: venv
	GOBOOM_SOAK=full GOBOOM_TEST_EVERY_EXTRA=1 $(PY) -m pytest -m soak -n 2 -q

# The browser tests (tests/web/test_web_browser.py) drive Debian's chromium: installed here when missing.
browser:
	command -v chromium >/dev/null || ($(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium)

lint: venv
	$(PY) -m ruff check .

bench: venv
	$(PY) benchmarks/throughput.py

# The documentation site (mkdocs.yml): docs/*.md and the API reference generated from the docstrings, built into
# site/; --strict makes every warning (a broken link or anchor, an unresolvable reference) an error.
# `make docs-serve` (or `make docs SERVE=1`) serves it at http://127.0.0.1:8000 instead, rebuilt on every change
# (warnings printed, not fatal, so a page stays viewable while its link is being fixed).
docs: venv
ifdef SERVE
	$(VENV)/bin/mkdocs serve
else
	$(VENV)/bin/mkdocs build --strict
endif

docs-serve:
	$(MAKE) docs SERVE=1

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist site *.egg-info
