# decido — one command for everything a fresh clone needs.
#   make test     : venv + build + install + ruff + mypy --strict + sanitizer C tests + pytest
#                   (both tiers of tests/tiers.py, spread over PYTEST_WORKERS xdist workers)
#   make test-fast: install + the fast tier only (pytest -m "not live": in process, no
#                   server, PostgreSQL, chromium or nginx), the inner loop
#   make bench    : asv benchmarks and the comparison script
#   make serve    : venv + install with every extra the `decido` commands and the client use
#                   (only when a source changed since the last install: .decido/serve.stamp),
#                   then `decido serve` (SERVE_ARGS=...)
# Every install builds with the venv's own build backend and Cython (--no-build-isolation) in
# the build directory pyproject.toml names (build/<wheel tag>), which CMake keeps between
# builds: a rebuild compiles only what changed. An isolated build (plain `pip install .`)
# runs Cython from a new temporary environment each time, whose path differs, and CMake then
# compiles the extension modules again (70 s of CPU, 3-6 min on the shared VM).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
SAN_BUILD := build/sanitize

.PHONY: test test-fast venv build-deps install lint typecheck ctest-sanitize pytest bench bench-compare compare clean serve

test: install lint typecheck ctest-sanitize pytest

$(PY):
	@echo "make: creating the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

venv: $(PY)

# the build backend and Cython of [build-system] requires, installed into the venv once (again
# when pyproject.toml changes; Python 3.10 has no tomllib, pip's vendored tomli reads it
# there), then what the backend asks for on top (cmake or ninja from PyPI when the system's
# are missing or too old: pip's isolated builds add them the same way)
BUILD_DEPS := $(VENV)/.decido-build-deps
$(BUILD_DEPS): pyproject.toml | $(PY)
	$(PIP) install --quiet $$($(PY) -c 'import importlib, sys; \
	  toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "pip._vendor.tomli"); \
	  print(" ".join(toml.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))')
	@more=$$($(PY) -c 'from scikit_build_core.build import get_requires_for_build_wheel as r; \
	  print(" ".join(r()))'); if [ -n "$$more" ]; then $(PIP) install --quiet $$more; fi
	@touch $@

build-deps: $(BUILD_DEPS)

# the project's own builds treat C warnings as errors (a user's `pip install .` does not:
# another compiler's new warning must not stop an install)
PIP_BUILD := $(PIP) install --no-build-isolation --config-settings=cmake.define.DECIDO_WERROR=ON

install: $(BUILD_DEPS)
	$(PIP_BUILD) --quiet ".[test]"

lint: venv
	$(PY) -m ruff check core service tests benchmarks

typecheck: venv
	$(PY) -m mypy --strict core/decido service/decido_service

ctest-sanitize:
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DDECIDO_PYTHON=OFF -DDECIDO_C_TESTS=ON -DDECIDO_SANITIZE=ON -DDECIDO_WERROR=ON
	cmake --build $(SAN_BUILD)
	cd $(SAN_BUILD) && ctest --output-on-failure -j 2

# the suite's two tiers (tests/tiers.py classifies every test by what it uses): live tests
# mostly wait on servers and clocks, hence more xdist workers than the 2 cores (-n 2
# against -n 4 not yet measured at a comparable load; docs/architecture.md, "Tests and
# measurements", has what was measured)
PYTEST_WORKERS ?= 4
PYTEST := cd tests && ../$(PY) -m pytest -q -p no:cacheprovider

# --dist loadscope: a module's tests stay on one worker, so a module-scoped fixture (a
# dashboard module's chromium and server, a module's own server) starts once
pytest: venv
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadscope

# the fast tier is CPU-bound: one xdist worker per core
FAST_WORKERS ?= 2
test-fast: install
	$(PYTEST) -m "not live" -n $(FAST_WORKERS)

bench: install
	$(PIP_BUILD) --quiet ".[bench]"
	cd benchmarks && ../$(PY) -m asv machine --yes && ../$(PY) -m asv run --python=same --quick --show-stderr

# asv continuous between the merge base with main and HEAD, each commit built into its own
# virtualenv (benchmarks/asv.conf.json); exits non-zero when a benchmark got slower by more
# than 10 % and asv's statistics call the change significant (CPU-timed benchmarks and
# callgrind instruction counts: benchmarks/README.md). A subset: make bench-compare BENCH=expr
BENCH_BASE ?= $(shell git merge-base main HEAD)
bench-compare: install
	$(PIP_BUILD) --quiet ".[bench]"
	cd benchmarks && ../$(PY) -m asv machine --yes && \
	  ../$(PY) -m asv continuous --factor 1.10 $(if $(BENCH),-b '$(BENCH)') $(BENCH_BASE) HEAD

compare: install
	$(PIP_BUILD) --quiet ".[bench]"
	$(PY) benchmarks/compare_eval.py

# the HTTP service on the embedded SQLite store (./decido.db), docs at /v1/docs;
# e.g. make serve SERVE_ARGS="--port 8080 --workers 2". The package is built and installed
# once; again only when a file it is built from is newer than the stamp.
# SERVE_EXTRAS: every extra but test and bench (tests/test_make_serve.py holds them equal to
# pyproject.toml's), so `decido serve`, `decido keys`, `decido optimize|decide|runs`,
# `--server`, decido.Client and /metrics all work after one build. Measured cold (new venv,
# no build directory, pip's cache warm): 94 s of CPU, 7.5 min wall on the 2-core VM shared
# with other builds (load average 9-15); after a changed Python file 1.5 s of CPU, 4.6 s
# (docs/service.md, "Running").
SERVE_STAMP   ?= .decido/serve.stamp
SERVE_EXTRAS  := service,metrics,client,cli
SERVE_SOURCES := pyproject.toml CMakeLists.txt $(shell find csrc core service -type f \
                   ! -name '*.pyc' ! -path '*/__pycache__/*' 2>/dev/null)

$(SERVE_STAMP): $(PY) $(BUILD_DEPS) $(SERVE_SOURCES)
	@echo "make serve: building the C library and installing decido[$(SERVE_EXTRAS)] into" \
	      "$(VENV): the first time about 1.5 min of CPU (6-8 min measured on a busy 2-core" \
	      "machine); after a change of the sources only what changed is" \
	      "compiled again (seconds)..."
	$(PIP_BUILD) --progress-bar on ".[$(SERVE_EXTRAS)]"
	@mkdir -p $(dir $@) && touch $@
	@echo "make serve: installed; starting decido serve (the decido command is in $(VENV):" \
	      "source $(VENV)/bin/activate in another terminal to use it)"

serve: $(SERVE_STAMP)
	$(VENV)/bin/decido serve $(SERVE_ARGS)

clean:
	rm -rf build $(VENV) .asv
