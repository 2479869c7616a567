# Two commands for a fresh machine: `make run` and `make test`. Both are idempotent.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q -c requirements/constraints.txt
PORT ?= 8000
export PORT
PG_URL ?= postgres://postgres@127.0.0.1:5432/advisor
REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run test lint install install-test debs clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(VENV)/bin/python requirements/base.txt requirements/constraints.txt
	$(PIP) -r requirements/base.txt
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements/test.txt
	$(PIP) -r requirements/test.txt
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	$(PY) manage.py migrate --no-input
	$(PY) manage.py serve --port $(PORT)

# Debian packages the tests use: chromium (the browser tests) and wrk (the API benchmark's load generator).
DEBS := chromium wrk gcc

debs:
	@missing=""; for p in $(DEBS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's$$missing for the tests"; \
	    (apt-get install -y -q $$missing >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q $$missing >/dev/null)); \
	  else echo "$$missing not found and cannot be installed here: their tests will be skipped (CI fails)"; fi; fi

lint: install-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: install-test debs lint
	@# Each run starts from empty test folders: no stale broker messages, uploads or databases.
	rm -rf var/test var/test-pg
	ADVISOR_VAR_DIR=$(CURDIR)/var/test $(VENV)/bin/pytest
	@if [ -n "$$CI" ] || scripts/services-up $(PG_URL) $(REDIS_URL); then \
	  echo "== integration again on PostgreSQL + Redis"; \
	  ADVISOR_VAR_DIR=$(CURDIR)/var/test-pg DATABASE_URL=$(PG_URL) CELERY_BROKER_URL=$(REDIS_URL) \
	    $(VENV)/bin/pytest -m postgres_redis -p no:cacheprovider; \
	else echo "SKIPPED: PostgreSQL/Redis not reachable here (CI=true makes this a failure)"; fi

clean:
	rm -rf var/test var/test-pg .pytest_cache
