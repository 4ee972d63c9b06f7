# Two commands: `make demo` and `make test`. Everything else is set-up they need.
PYTHON ?= python3
VENV   := .venv
MPICH  := .mpich
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

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

demo: $(VENV)/.installed
	$(BIN)/commscope info
	$(BIN)/commscope run pingpong --np 2 --sizes 0:64KiB --modes standard,synchronous
	$(BIN)/commscope run bw --np 2 --sizes 1KiB:4MiB

test: $(VENV)/.installed $(MPICH)/.installed
	COMMSCOPE_TEST_MPICH=$(abspath $(MPICH)) $(BIN)/pytest -q

bench: $(VENV)/.installed $(MPICH)/.installed
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/overhead.py --mpi $(abspath $(MPICH))

clean:
	rm -rf $(VENV) $(MPICH) commscope.db
