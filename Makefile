# make run   install into .venv and serve the companion on the LAN
# make service         the same server as a systemd service: it starts at boot and comes
#                      back by itself when it dies (README: "On a Raspberry Pi")
# make service-remove  stop that service and remove it (the database stays)
# make test  install the test tools too, lint, and run every test (Chromium included),
#            then the database tests again on PostgreSQL (a server of their own)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMPS := $(VENV)/.stamps

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

.PHONY: run test lint format messages clean htmx-copy service service-build service-remove

run: $(STAMPS)/install $(COMPILED) htmx-copy
	$(BIN)/python -m companion.serve

# The server migrates as it starts, as with `make run`; install waits until it answers.
service:
	$(AS_USER)$(MAKE) --no-print-directory service-build PYTHON=$(PYTHON) VENV=$(VENV)
	$(BIN)/python deploy/service.py install --name $(SERVICE)

service-build: $(STAMPS)/install $(COMPILED) htmx-copy

service-remove:
	$(PYTHON) deploy/service.py remove --name $(SERVICE)

test: $(STAMPS)/install-test $(COMPILED) $(HTMX_FILE) $(SSE_FILE)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/pytest
	$(BIN)/pytest --database=postgresql

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
	$(PYTHON) -m venv $(VENV)

# Stamps: reinstall only when pyproject.toml changes, so repeat runs are quick.
$(STAMPS)/install: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	mkdir -p $(STAMPS) && touch $@

# The benchmarks' tools come along, so bench/ runs after `make test`.
$(STAMPS)/install-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	mkdir -p $(STAMPS) && touch $@ $(STAMPS)/install

$(COMPILED): %.mo: %.po | $(STAMPS)/install
	$(BIN)/pybabel compile -d $(TRANSLATIONS)

# The pinned htmx from npm: the app serves it when phones cannot reach the CDN, and the
# tests serve it in place of the CDN, which also proves the SRI hash. Never committed.
# One npm install for both: another install into the folder would remove the first.
$(HTMX_FILE) $(SSE_FILE) &:
	npm install --prefix $(VENDOR) --no-audit --no-fund --no-save htmx.org@$(HTMX_VERSION) htmx-ext-sse@$(SSE_VERSION)

# `make run` goes on without it (no npm, no registry): phones then need the CDN.
htmx-copy:
	@$(MAKE) --no-print-directory $(HTMX_FILE) $(SSE_FILE) || echo "htmx copy not installed: phones will need its CDN"

clean:
	rm -rf $(STAMPS) $(VENDOR) tests/.artifacts messages.pot $(COMPILED)
