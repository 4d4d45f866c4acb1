# The README's commands. Each target installs what it needs first and is safe to run again.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: install test lint

install: $(VENV)/.installed $(VENV)/.functions-path node_modules/.installed

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

# functions/ is the functions' code root, as /var/task is in Lambda (`import controlplane`). This
# .pth file is the one place that puts it on the import path, for every tool that runs the venv's
# python: pytest, make run, the benchmarks, cdk synth (app.py). Relative to site-packages, so the
# venv points into its own checkout.
$(VENV)/.functions-path: $(VENV)/.installed
	$(BIN)/python -c 'import os, sysconfig; site = sysconfig.get_paths()["purelib"]; \
		open(os.path.join(site, "controlplane-functions.pth"), "w").write(os.path.relpath("functions", site) + "\n")'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy  # what it checks, and how strictly: pyproject.toml
	$(BIN)/python -m pytest  # not bin/pytest, whose first line names the venv by its path when it was made

lint: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The API on http://127.0.0.1:3000 (PORT=...), on DynamoDB Local with its data in .local/dynamodb.
# Ctrl-C stops both. make seed, in another terminal, fills it with a demo organization.
.PHONY: run seed events
run: install
	$(BIN)/python -m local.server

seed: install
	$(BIN)/python -m local.seed

# The template for sam local invoke: it also declares the local-only variables, so that
# --env-vars events/env.json can set them (SAM overrides only declared ones). Never deploy it.
.PHONY: synth-sam
synth-sam: install
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) -c sam_local=true $(CDK_ARGS)

# A local ID token for make run's API: make token (an operator), make token ORG=acme USER=alice ROLE=admin.
# USER is only taken from the command line: the shell's own $$USER is not an org user.
ROLE ?= operator
.PHONY: token
token: install
	@$(BIN)/python -m local.tokens --role $(ROLE) $(if $(ORG),--org $(ORG)) \
		$(if $(filter command line,$(origin USER)),--user $(USER))

# events/: an API Gateway event per route and the env-vars file, for sam local invoke.
events: install
	$(BIN)/python -m local.events

# cdk.out/ControlPlane-$(STAGE).template.json and its assets, offline; fails on unacknowledged
# cdk-nag findings. Other context: make synth STAGE=prod CDK_ARGS="-c cors_allow_origins=https://x.example"
STAGE ?= dev
.PHONY: synth
synth: install
	node_modules/.bin/cdk synth --no-notices --quiet -c stage=$(STAGE) $(CDK_ARGS)

# docs/BENCHMARKS.md: requests per call, handler overhead, flat pages, cold start, asset size, on
# DynamoDB Local (several minutes; not part of make test). A smoke run: make bench BENCH_ARGS=--quick
.PHONY: bench
bench: install
	$(BIN)/python -m bench $(BENCH_ARGS)

# One-off, after deploying seat counts: count the users of every org stored without user_count.
# make migrate-user-counts TABLE=<the stack's TableName>; for make run's table, also
# AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 and TABLE=control-plane-local. Safe to run again.
.PHONY: migrate-user-counts
migrate-user-counts: install
	$(BIN)/python -m local.migrate_user_counts --table $(TABLE)
