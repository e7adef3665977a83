# The two commands: `make run` (default campaign -> results/<name>/report.html) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
EXTRAS ?= mpi,test,workflow,baselines,sensitivity,examples,benchmark,configspace,docs
CORES  ?= 2
CONSTRAINTS := requirements/constraints.txt
STAMP  := $(VENV)/.installed

export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: run test install lint format docs constraints slurm-profile clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the package metadata or the pins change.
$(STAMP): $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

# CONFIG names the campaign (config/README.md); its `setup` commands run first.
CONFIG ?= config/config.yaml

run: $(STAMP)
	$(BIN)/python -m propulate.campaign setup $(CONFIG)
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)
	@echo "report: $$($(BIN)/python -m propulate.campaign report-path $(CONFIG))"
	@$(BIN)/python -m propulate.campaign next-steps $(CONFIG)

# The suite runs on TEST_WORKERS pytest-xdist workers, a whole test module to a worker (its
# module fixtures are built once), the longest modules first (tests/conftest.py). Tests marked
# `serial` hold CPU or time to a bound and run afterwards, alone. Exit status 5 of either part
# means it selected no test (e.g. PYTEST_ARGS names one test file).
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  -m "not serial" $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(BIN)/python -m pytest -m serial $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The documentation site, from scratch (as on a fresh clone): warnings are errors, then every
# internal link of the built pages must resolve. Open docs/_build/html/index.html.
DOCS_BUILD := docs/_build/html

docs: $(STAMP)
	rm -rf docs/_build docs/api/generated
	$(BIN)/python -m sphinx -j auto -b html -W --keep-going -q docs $(DOCS_BUILD)
	$(BIN)/python docs/check_links.py $(DOCS_BUILD)
	@echo "site: $(DOCS_BUILD)/index.html"

LINT_PATHS := propulate tests benchmarks examples docs/conf.py docs/check_links.py

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint

format: $(STAMP)
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)
	$(BIN)/snakefmt Snakefile workflow/rules

# Regenerate the pinned constraints: resolve the newest releases allowed by pyproject.toml in a
# throw-away venv and freeze them.
constraints:
	rm -rf .venv-pin
	$(PYTHON) -m venv .venv-pin
	.venv-pin/bin/python -m pip install --quiet --upgrade pip
	.venv-pin/bin/python -m pip install --quiet ".[$(EXTRAS)]"
	.venv-pin/bin/python -m pip freeze --exclude propulate | grep -v '^-e' > $(CONSTRAINTS)
	rm -rf .venv-pin

# `snakemake --profile slurm` looks in ~/.config/snakemake, not profiles/: link it there (one copy).
SNAKEMAKE_CONFIG_DIR ?= $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/snakemake
slurm-profile:
	mkdir -p $(SNAKEMAKE_CONFIG_DIR)
	@if [ -e $(SNAKEMAKE_CONFIG_DIR)/slurm ] && [ ! -L $(SNAKEMAKE_CONFIG_DIR)/slurm ]; then \
	  echo "$(SNAKEMAKE_CONFIG_DIR)/slurm exists and is not a link; move it away first" >&2; exit 1; fi
	ln -sfn $(CURDIR)/profiles/slurm $(SNAKEMAKE_CONFIG_DIR)/slurm
	@echo "snakemake --profile slurm now uses $(CURDIR)/profiles/slurm"

clean:
	rm -rf $(VENV) .snakemake results/* docs/_build docs/api/generated
