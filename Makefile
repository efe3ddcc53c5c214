# The two commands of the README: `make run` and `make test`. Both install what they need first.
# The Python the virtualenv is built from. Debian's, which every user can run: started as root, `make serve` runs
# the app as SERVE_USER (nobody), which cannot run a Python kept in root's home (pyenv's) and refuses to start.
PYTHON ?= /usr/bin/python3
VENV := .venv
BIN := $(VENV)/bin
# Named before the rules that need it: make expands a rule's prerequisites as it reads the rule.
GRAPHVIZ := $(VENV)/graphviz/dot
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/aptix_modes
# Tests speak plain HTTP to the test client, so no HTTPS redirect.
TEST_ENV := SECRET_KEY=tests-only-not-a-secret SECURE_SSL_REDIRECT=0
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check

.PHONY: install install-test run serve test test-sqlite test-postgres bench bench-volume

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# What serving needs; the tests' packages (requirements-test.txt) come on top.
$(VENV)/.installed-runtime: requirements.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements.txt requirements-test.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements-test.txt
	touch $@ $(VENV)/.installed-runtime

install: $(VENV)/.installed-runtime $(GRAPHVIZ)

install-test: $(VENV)/.installed-test $(GRAPHVIZ)

# Serves the app on http://127.0.0.1:8000/ (HOST and PORT, as for make serve) with the embedded SQLite database.
# Prints a new API token named `local` at each start (the previous one is revoked: only a digest of a key is stored,
# so none can be shown twice).
run: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py create_local_admin
	DEBUG=1 $(BIN)/python manage.py runserver $(HOST):$(PORT)

# Serves the app for production (deploy/serve): nginx on HOST:PORT in front, reading whole requests and closing
# slow or idle connections, and Granian running the app behind it in WORKERS processes (default: one per core).
# Settings come from the environment (SECRET_KEY, DATABASE_URL, ...). Started as root, the app and nginx's workers
# run as SERVE_USER, never as root. A dead worker is replaced; SIGHUP to deploy/serve reloads the code
# (docs/operations.md, Staying up). It exits when nginx or Granian does, for a service manager to restart
# (deploy/aptix-modes.service).
SERVE_USER ?= nobody
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(os.cpu_count() or 1)')
NGINX := $(VENV)/nginx/usr/sbin/nginx
APT_DOWNLOAD := apt-get download -q -o APT::Sandbox::User=root nginx
APT_DOWNLOAD_PGBOUNCER := apt-get download -q -o APT::Sandbox::User=root pgbouncer libc-ares2
serve: install $(NGINX)
	HOST=$(HOST) PORT=$(PORT) WORKERS=$(WORKERS) SERVE_USER=$(SERVE_USER) NGINX_BIN=$(NGINX) VENV_BIN=$(BIN) exec deploy/serve

# nginx from Debian's package, unpacked into the virtualenv: no system service is installed or started.
$(NGINX): | $(BIN)/python
	rm -rf $(VENV)/nginx-download && mkdir -p $(VENV)/nginx-download
	cd $(VENV)/nginx-download && ($(APT_DOWNLOAD) || (apt-get update -q && $(APT_DOWNLOAD)))
	dpkg-deb -x $(VENV)/nginx-download/nginx_*.deb $(VENV)/nginx
	rm -rf $(VENV)/nginx-download
	$(NGINX) -v

# PgBouncer from Debian's package (and the c-ares library it needs, which Debian's base system lacks), unpacked
# into the virtualenv like nginx: the two-host test runs it on a port of its own.
PGBOUNCER := $(VENV)/pgbouncer/usr/sbin/pgbouncer
$(PGBOUNCER): | $(BIN)/python
	rm -rf $(VENV)/pgbouncer-download && mkdir -p $(VENV)/pgbouncer-download
	cd $(VENV)/pgbouncer-download && ($(APT_DOWNLOAD_PGBOUNCER) || (apt-get update -q && $(APT_DOWNLOAD_PGBOUNCER)))
	for deb in $(VENV)/pgbouncer-download/*.deb; do dpkg-deb -x $$deb $(VENV)/pgbouncer; done
	rm -rf $(VENV)/pgbouncer-download
	LD_LIBRARY_PATH=$$(echo $(VENV)/pgbouncer/usr/lib/*-linux-gnu) $(PGBOUNCER) --version

# Graphviz's dot from Debian's packages, unpacked into the virtualenv like nginx: the admin draws the mode graph with
# it (modes/graph_drawing.py). Debian's dot is libgvc6's program (the graphviz package only links /usr/bin/dot to
# it, and needs X11, gd and more); it lays out as the engine its name says, hence the link named dot. Of its
# plugins only core (the SVG output) and dot_layout are kept (the others need cairo, pango, gd, X11), and `dot -c`
# writes their list (config6a) beside them, by names relative to the folder (which may move). It runs with
# GVBINDIR (the plugins) and LD_LIBRARY_PATH (the libraries) pointing into the folder.
GRAPHVIZ_PACKAGES := libgvc6 libcgraph6 libcdt5 libpathplan4 libltdl7
APT_DOWNLOAD_GRAPHVIZ := apt-get download -q -o APT::Sandbox::User=root $(GRAPHVIZ_PACKAGES)
GRAPHVIZ_ENV = LD_LIBRARY_PATH=$$(echo $(CURDIR)/$(VENV)/graphviz/usr/lib/*-linux-gnu) \
	GVBINDIR=$$(echo $(CURDIR)/$(VENV)/graphviz/usr/lib/*-linux-gnu/graphviz)
$(GRAPHVIZ): | $(BIN)/python
	rm -rf $(VENV)/graphviz-download $(VENV)/graphviz && mkdir -p $(VENV)/graphviz-download
	cd $(VENV)/graphviz-download && ($(APT_DOWNLOAD_GRAPHVIZ) || (apt-get update -q && $(APT_DOWNLOAD_GRAPHVIZ)))
	for deb in $(VENV)/graphviz-download/*.deb; do dpkg-deb -x $$deb $(VENV)/graphviz; done
	rm -rf $(VENV)/graphviz-download
	find $(VENV)/graphviz/usr/lib/*-linux-gnu/graphviz -name 'libgvplugin_*' ! -name 'libgvplugin_core.*' \
		! -name 'libgvplugin_dot_layout.*' -delete
	ln -s usr/sbin/libgvc6-config-update $(VENV)/graphviz/dot.new
	cd $(VENV)/graphviz/usr/lib/*-linux-gnu/graphviz && LD_LIBRARY_PATH=.. GVBINDIR=. ../../../../dot.new -c
	echo 'digraph { a -> b }' | $(GRAPHVIZ_ENV) $(VENV)/graphviz/dot.new -Kdot -Tsvg >/dev/null
	mv $(VENV)/graphviz/dot.new $(GRAPHVIZ)

# The whole suite, on SQLite and on PostgreSQL side by side: each run keeps mostly one core busy, and the tests
# take their ports, databases and Redis servers apart from any other run (tests/servers.py). Each run's output is
# printed whole when it ends (-O). Some tests serve the app with make serve.
test: install-test $(NGINX) $(PGBOUNCER)
	$(MAKE) --no-print-directory -j2 -Otarget test-sqlite test-postgres

# Without make's variables: a test's own `make serve` would be handed the parallel run's jobserver and warn of it.
test-sqlite: install-test $(NGINX) $(PGBOUNCER)
	env -u DATABASE_URL -u MAKEFLAGS -u MFLAGS $(TEST_ENV) $(BIN)/python -m pytest $(PYTEST_ARGS)

test-postgres: install-test $(NGINX) $(PGBOUNCER)
	env -u MAKEFLAGS -u MFLAGS $(TEST_ENV) DATABASE_URL=$(PG_TEST_URL) $(BIN)/python -m pytest $(PYTEST_ARGS)

# The benchmark harness (benchmarks/run.py): the app against a reference project, both under make serve.
# BENCH_ARGS="--rounds 5 --databases postgres" changes the run; it exits non-zero when a budget is missed.
# First, the offline routing scorer's accuracy against a lexical ranker, and its time for 300 cases.
bench: install $(NGINX)
	command -v wrk >/dev/null || apt-get install -y -q wrk
	$(PIP_INSTALL) -r benchmarks/requirements.txt
	$(BIN)/python -m benchmarks.routing_scorers
	$(BIN)/python -m benchmarks.run $(BENCH_ARGS)

# The volume benchmark (benchmarks/volume.py): every endpoint and admin page on a PostgreSQL database filled to
# a million sessions and ten million mode changes, against the same catalog on an empty one.
bench-volume: install $(NGINX)
	command -v wrk >/dev/null || apt-get install -y -q wrk
	$(PIP_INSTALL) -r benchmarks/requirements.txt
	$(BIN)/python -m benchmarks.volume $(BENCH_ARGS)
