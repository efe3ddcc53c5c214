# The two commands of the README: `make run` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/aptix_modes
# Tests speak plain HTTP to the test client, so no HTTPS redirect.
TEST_ENV := SECRET_KEY=tests-only-not-a-secret SECURE_SSL_REDIRECT=0

.PHONY: install run test test-sqlite test-postgres

$(BIN)/activate: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(BIN)/activate

install: $(BIN)/activate

# Serves the app on http://127.0.0.1:8000/ with the embedded SQLite database.
run: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py create_local_admin
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

# The whole suite, on SQLite and then on PostgreSQL.
test: test-sqlite test-postgres

test-sqlite: install
	env -u DATABASE_URL $(TEST_ENV) $(BIN)/python -m pytest $(PYTEST_ARGS)

test-postgres: install
	$(TEST_ENV) DATABASE_URL=$(PG_TEST_URL) $(BIN)/python -m pytest $(PYTEST_ARGS)
