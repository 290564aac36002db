# make run   install into .venv and serve the companion on the LAN
# make service         the same server as a systemd service: it starts at boot and comes
#                      back by itself when it dies (README: "On a Raspberry Pi")
# make service-remove  stop that service and remove it (the database stays)
# make test  install the test tools too, lint, and run every test (Chromium included),
#            then the database tests again on PostgreSQL (a server of their own), on
#            every core (TEST_WORKERS=1 for one process)
# make lock  update the locked versions (requirements/*.txt) to the newest that
#            pyproject.toml's ranges allow; then `make test` (README: "Locked versions")

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMPS := $(VENV)/.stamps

# Every install takes the exact versions of the lock files, checked by their hashes, so a
# household runs what CI tested: run.txt for the app, test.txt for the app and the test
# and benchmark tools (the same versions of every package the two share), postgresql.txt
# for a club's servers. `make lock` writes them with uv, which resolves once for every
# platform and Python from 3.11 on.
LOCKS := requirements
UV_VERSION := 0.13.9
LOCK_TOOLS := .venv-lock
LOCK_PYTHON := 3.11
COMPILE = $(LOCK_TOOLS)/bin/uv pip compile --quiet --universal --python-version $(LOCK_PYTHON) \
	--generate-hashes --custom-compile-command "make lock" pyproject.toml $(LOCKS)/build.in
# The lock's packages (none unlocked: --require-hashes refuses any), then the companion
# itself from this checkout, built by the locked setuptools.
install = $(BIN)/python -m pip install --quiet --require-hashes -r $(1) \
	&& $(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .

TRANSLATIONS := companion/translations
CATALOGS := $(wildcard $(TRANSLATIONS)/*/LC_MESSAGES/messages.po)
COMPILED := $(CATALOGS:.po=.mo)

# The pinned versions live in companion/web/htmx.py alone; read them from there.
pinned = $(shell sed -n 's/^$(1) = "\(.*\)"/\1/p' companion/web/htmx.py)
HTMX_VERSION := $(call pinned,HTMX_VERSION)
SSE_VERSION := $(call pinned,SSE_VERSION)
VENDOR := vendor
HTMX_FILE := $(VENDOR)/node_modules/htmx.org/dist/htmx.min.js
SSE_FILE := $(VENDOR)/node_modules/htmx-ext-sse/dist/sse.min.js

# The systemd unit's name (deploy/service.py --name).
SERVICE ?= companion
# `sudo make service` still builds the venv as the user who ran sudo: the service runs as them.
AS_USER := $(if $(and $(SUDO_USER),$(filter 0,$(shell id -u))),sudo -u $(SUDO_USER) -H ,)

.PHONY: run test test-tools lint format messages clean htmx-copy service service-build service-remove lock install-postgresql

run: $(STAMPS)/install $(COMPILED) htmx-copy
	@echo "make run: starting the companion (it migrates the database first)"
	$(BIN)/python -m companion.serve

# The server migrates as it starts, as with `make run`; install waits until it answers.
service:
	$(AS_USER)$(MAKE) --no-print-directory service-build PYTHON=$(PYTHON) VENV=$(VENV)
	$(BIN)/python deploy/service.py install --name $(SERVICE)

service-build: $(STAMPS)/install $(COMPILED) htmx-copy

service-remove:
	$(PYTHON) deploy/service.py remove --name $(SERVICE)

# The tests spread over every core (pytest-xdist: a worker process each, with its own
# servers, Chromium and PostgreSQL); a worker that runs out of tests takes some of the
# other's (worksteal: a few tests take a minute, and a run ends with its slowest
# worker); each phase says how long it took.
TEST_WORKERS ?= auto
# Each phase takes one worker more than there are cores: the SQLite phase's browser tests
# wait for pages and pushes (with a worker per core the CPU stood idle a third of the
# time: 1,190 s of CPU in 887 s on two cores), the PostgreSQL phase's for the database
# server and the servers some tests start (two workers: 315 s, three: 266 s).
# TEST_WORKERS=1 (or any number) sets both.
CORES_PLUS_ONE = $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
WORKERS = $(if $(filter auto,$(TEST_WORKERS)),$(CORES_PLUS_ONE),$(TEST_WORKERS))
XDIST = --dist worksteal
DURATIONS ?= --durations=15  # the slowest tests of each phase, where CI's time goes
timed = @start=$$(date +%s); $(2); status=$$?; \
	echo "make: $(1) took $$(( $$(date +%s) - start )) s"; exit $$status

test: test-tools
	$(call timed,lint,$(BIN)/ruff check . && $(BIN)/lint-imports)
	$(call timed,the tests on SQLite (Chromium included),$(BIN)/pytest -n $(WORKERS) $(XDIST) $(DURATIONS))
	$(call timed,the database tests on PostgreSQL,$(BIN)/pytest -n $(WORKERS) $(XDIST) --database=postgresql $(DURATIONS))

# What the tests need installed (CI times it apart from the tests).
test-tools: $(STAMPS)/install-test $(COMPILED) $(HTMX_FILE) $(SSE_FILE)

lint: $(STAMPS)/install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMPS)/install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Re-extract every translatable string, then merge them into each catalog; translate the
# empty msgstr entries after. Keywords besides _/gettext/ngettext: N_ marks the rules'
# message templates, NP_ their singular/plural pairs, _l lazy strings.
messages: $(STAMPS)/install
	$(BIN)/pybabel extract -F babel.cfg -k N_ -k NP_:1,2 -k _l -o messages.pot . && $(BIN)/pybabel update -i messages.pot -d $(TRANSLATIONS)

$(BIN)/python:
	@echo "make: creating $(VENV) with $(PYTHON) (a few seconds)"
	$(PYTHON) -m venv $(VENV)

# Stamps: reinstall only when a lock file or pyproject.toml changes: repeat runs are quick.
$(STAMPS)/install: $(LOCKS)/run.txt pyproject.toml | $(BIN)/python
	@echo "make: installing the companion's packages as $(LOCKS)/run.txt locks them (about 15 s the first time)"
	$(call install,$(LOCKS)/run.txt)
	mkdir -p $(STAMPS) && touch $@

# A club's server: the app and the PostgreSQL driver (README: "Club set-up"); make run
# then finds it installed.
install-postgresql: $(LOCKS)/postgresql.txt pyproject.toml | $(BIN)/python
	@echo "make: installing the companion and the PostgreSQL driver as $(LOCKS)/postgresql.txt locks them"
	$(call install,$(LOCKS)/postgresql.txt)
	mkdir -p $(STAMPS) && touch $(STAMPS)/install

# The benchmarks' tools come along, so bench/ runs after `make test`.
$(STAMPS)/install-test: $(LOCKS)/test.txt pyproject.toml | $(BIN)/python
	@echo "make: installing the companion and its test tools as $(LOCKS)/test.txt locks them"
	$(call install,$(LOCKS)/test.txt)
	mkdir -p $(STAMPS) && touch $@ $(STAMPS)/install

# Newest versions within pyproject.toml's ranges: test.txt resolves first, and run.txt and
# postgresql.txt take its versions (-c), so every package is at one version in all three.
lock: $(LOCK_TOOLS)/bin/uv
	$(COMPILE) --upgrade --all-extras -o $(LOCKS)/test.txt
	$(COMPILE) -c $(LOCKS)/test.txt -o $(LOCKS)/run.txt
	$(COMPILE) -c $(LOCKS)/test.txt --extra postgresql -o $(LOCKS)/postgresql.txt

$(LOCK_TOOLS)/bin/uv:
	$(PYTHON) -m venv $(LOCK_TOOLS)
	$(LOCK_TOOLS)/bin/python -m pip install --quiet uv==$(UV_VERSION)

$(COMPILED): %.mo: %.po | $(STAMPS)/install
	@echo "make: compiling the translations (de, fr)"
	$(BIN)/pybabel compile -d $(TRANSLATIONS)

# The pinned htmx from npm: the app serves it when phones cannot reach the CDN, and the
# tests serve it in place of the CDN, which also proves the SRI hash. Never committed.
# One npm install for both: another install into the folder would remove the first.
$(HTMX_FILE) $(SSE_FILE) &:
	@echo "make: fetching htmx $(HTMX_VERSION) from npm, the copy phones get when the CDN is out of reach"
	npm install --prefix $(VENDOR) --no-audit --no-fund --no-save htmx.org@$(HTMX_VERSION) htmx-ext-sse@$(SSE_VERSION)

# `make run` goes on without it (no npm, no registry): phones then need the CDN.
htmx-copy:
	@$(MAKE) -s --no-print-directory $(HTMX_FILE) $(SSE_FILE) || echo "htmx copy not installed: phones will need its CDN"

clean:
	rm -rf $(STAMPS) $(VENDOR) tests/.artifacts messages.pot $(COMPILED)
