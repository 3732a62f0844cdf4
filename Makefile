# decido — one command for everything a fresh clone needs.
#   make test     : venv + build + install + ruff + mypy --strict + sanitizer C tests + pytest
#   make bench    : asv benchmarks and the comparison script
#   make serve    : venv + install with the service extra (only when a source changed since
#                   the last install: .decido/serve.stamp), then `decido serve` (SERVE_ARGS=...)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
SAN_BUILD := build/sanitize

.PHONY: test venv install lint typecheck ctest-sanitize pytest bench bench-compare compare clean serve

test: install lint typecheck ctest-sanitize pytest

$(PY):
	@echo "make: creating the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

venv: $(PY)

install: venv
	$(PIP) install --quiet ".[test]"

lint: venv
	$(PY) -m ruff check core service tests benchmarks

typecheck: venv
	$(PY) -m mypy --strict core/decido service/decido_service

ctest-sanitize:
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DDECIDO_PYTHON=OFF -DDECIDO_C_TESTS=ON -DDECIDO_SANITIZE=ON -DDECIDO_WERROR=ON
	cmake --build $(SAN_BUILD)
	cd $(SAN_BUILD) && ctest --output-on-failure

pytest: venv
	cd tests && ../$(PY) -m pytest -q -p no:cacheprovider

bench: install
	$(PIP) install --quiet ".[bench]"
	cd benchmarks && ../$(PY) -m asv machine --yes && ../$(PY) -m asv run --python=same --quick --show-stderr

# asv continuous between the merge base with main and HEAD, each commit built into its own
# virtualenv (benchmarks/asv.conf.json); exits non-zero when a benchmark got slower by more
# than 10 % and asv's statistics call the change significant (CPU-timed benchmarks and
# callgrind instruction counts: benchmarks/README.md). A subset: make bench-compare BENCH=expr
BENCH_BASE ?= $(shell git merge-base main HEAD)
bench-compare: install
	$(PIP) install --quiet ".[bench]"
	cd benchmarks && ../$(PY) -m asv machine --yes && \
	  ../$(PY) -m asv continuous --factor 1.10 $(if $(BENCH),-b '$(BENCH)') $(BENCH_BASE) HEAD

compare: install
	$(PIP) install --quiet ".[bench]"
	$(PY) benchmarks/compare_eval.py

# the HTTP service on the embedded SQLite store (./decido.db), docs at /v1/docs;
# e.g. make serve SERVE_ARGS="--port 8080 --workers 2". The package is built and installed
# once; again only when a file it is built from is newer than the stamp.
SERVE_STAMP   ?= .decido/serve.stamp
SERVE_SOURCES := pyproject.toml CMakeLists.txt $(shell find csrc core service -type f \
                   ! -name '*.pyc' ! -path '*/__pycache__/*' 2>/dev/null)

$(SERVE_STAMP): $(PY) $(SERVE_SOURCES)
	@echo "make serve: building the C library and installing decido[service,metrics] into" \
	      "$(VENV) (about 1-2 minutes; only after a change of the sources)..."
	$(PIP) install --progress-bar on ".[service,metrics]"
	@mkdir -p $(dir $@) && touch $@
	@echo "make serve: installed; starting decido serve"

serve: $(SERVE_STAMP)
	$(VENV)/bin/decido serve $(SERVE_ARGS)

clean:
	rm -rf build $(VENV) .asv
