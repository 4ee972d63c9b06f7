# Two commands: `make demo` and `make test`. Everything else is set-up they need.
PYTHON ?= python3
VENV   := .venv
MPICH  := .mpich
BIN    := $(VENV)/bin

.PHONY: demo test bench clean browser slurm

# The venv holds commscope, its Python dependencies and the embedded Open MPI wheel.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# MPICH in a prefix of its own: both wheels install bin/mpicc, so they cannot share one.
$(MPICH)/.installed:
	$(PYTHON) -m venv $(MPICH)
	$(MPICH)/bin/pip install --quiet mpich
	touch $@

# The main job: measure, fit the models, write the report (of every run in the file).
demo: $(VENV)/.installed
	$(BIN)/commscope info
	$(BIN)/commscope run bw --np 2 --sizes 1KiB:4MiB
	$(BIN)/commscope run pingpong --np 2 --sizes 0:4MiB --modes standard,synchronous
	$(BIN)/commscope fit
	$(BIN)/commscope report -o commscope-report.html

# The fast tier (no MPI launched) on every core at once, then the tests that launch MPI
# one at a time: MPI ranks that share the cores with another test's would time it wrong.
test: export COMMSCOPE_TEST_MPICH = $(abspath $(MPICH))
test: $(VENV)/.installed $(MPICH)/.installed browser slurm
	$(BIN)/pytest -q -m "not mpi" -n auto --durations=10
	$(BIN)/pytest -q -m mpi --durations=25

# tests/test_report.py renders a report in headless chromium: Debian's package is installed
# when missing and we are root; otherwise that test skips and says why.
browser:
	@if ! command -v chromium >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; \
	then apt-get update -qq && apt-get install -y -qq chromium; fi

# tests/test_slurm.py runs a real Slurm on the namespace cluster: Debian's Slurm 22.05 and
# munge, and the PMIx library Slurm's PMIx plugin loads (by its unversioned name, which only
# the -dev package installs), when missing and we are root; without root those tests skip.
SLURM_DEBS := slurmd slurmctld slurm-client munge libpmix-dev
slurm:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	    && ! dpkg -s $(SLURM_DEBS) >/dev/null 2>&1; then apt-get update -qq \
	    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	       $(SLURM_DEBS) >/dev/null; fi

bench: $(VENV)/.installed $(MPICH)/.installed
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/overhead.py --mpi $(abspath $(MPICH))
	$(BIN)/python bench/time_to_answer.py
	$(BIN)/python bench/analysis.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/signals.py --mpi $(abspath $(VENV)) --mpi $(abspath $(MPICH))
	$(BIN)/python bench/guidelines.py
	$(BIN)/python bench/health.py scale
	$(BIN)/python bench/guidelines.py --mpi $(abspath $(MPICH))

clean:
	rm -rf $(VENV) $(MPICH) commscope.db commscope-report.html
