# The two commands of the README: `make run` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/aptix_modes
# Tests speak plain HTTP to the test client, so no HTTPS redirect.
TEST_ENV := SECRET_KEY=tests-only-not-a-secret SECURE_SSL_REDIRECT=0
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check

.PHONY: install install-test run serve test test-sqlite test-postgres

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# What serving needs; the tests' packages (requirements-test.txt) come on top.
$(VENV)/.installed-runtime: requirements.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements.txt requirements-test.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements-test.txt
	touch $@ $(VENV)/.installed-runtime

install: $(VENV)/.installed-runtime

install-test: $(VENV)/.installed-test

# Serves the app on http://127.0.0.1:8000/ with the embedded SQLite database.
run: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py create_local_admin
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

# Serves the app for production with Granian: settings from the environment (SECRET_KEY, DATABASE_URL, ...),
# bound to HOST:PORT, one worker process per core. A client that is slow to send its headers holds no
# thread and is closed after 30 s; one slow to send its body holds one of a worker's 256 threads.
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(os.cpu_count() or 1)')
serve: install
	exec $(BIN)/granian --interface wsgi --host $(HOST) --port $(PORT) --workers $(WORKERS) \
		--http1-header-read-timeout 30000 --no-ws aptix_site.wsgi:application

# The whole suite, on SQLite and then on PostgreSQL.
test: test-sqlite test-postgres

test-sqlite: install-test
	env -u DATABASE_URL $(TEST_ENV) $(BIN)/python -m pytest $(PYTEST_ARGS)

test-postgres: install-test
	$(TEST_ENV) DATABASE_URL=$(PG_TEST_URL) $(BIN)/python -m pytest $(PYTEST_ARGS)
