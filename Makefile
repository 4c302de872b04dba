# The two commands of the README. Each does its own set-up (scripts/setup).
.PHONY: demo test setup lint bench

demo:
	bash scripts/setup demo
	.venv/bin/agentbed demo

# Three xdist workers, two of them CPU-bound: the third runs only the tests that mostly wait, Ray's
# and a few files waiting on timeouts or a server (tests/conftest.py's WAITING_UNITS, session 24).
# Three workers taking any file (session 22) cut the tests from 19 min 41 s to 17 min 41 s quiet, but
# the pinned repositories' own wall-clock tests (transitions' timers, pydash's debounce with 15 ms
# margins) then failed in two of three clean-clone checks (docs/benchmarks-history-4.md).
# The tests write bytecode even where PYTHONDONTWRITEBYTECODE is set (as on this project's machines):
# otherwise every agentbed subprocess a test starts compiles the modules it imports again (0.6-0.8 s of
# CPU each); on three subprocess-heavy engine files 103.7 -> 89.7 s of CPU, the first run compiling
# (session 24). The .pyc files go to the clone's ignored __pycache__ directories.
# mypy (about 75 s of one core with no cache, as on a fresh clone) runs beside the tests at a lower
# priority, taking the time the workers leave a core idle; its report follows the tests', and
# either failing fails `make test` (docs/benchmarks.md). `make lint` runs it alone, first.
# Under CI=true (a fresh clone, whose cache nothing would reuse) mypy writes no incremental cache:
# 85.6 -> 75.8 and 73.0 -> 61.1 s of CPU side by side (session 24); elsewhere the cache speeds the next run.
MYPY_CACHE := $(if $(filter true,$(CI)),--cache-dir=/dev/null)
# PYTEST_ARGS (empty unless given, e.g. from the environment) goes to pytest: with
# PYTEST_ARGS="--record-file-costs tests/file_costs.json" the run rewrites the schedule's table.
test:
	bash scripts/setup test
	.venv/bin/ruff check .
	@typed="$$(mktemp)"; nice -n 10 .venv/bin/mypy $(MYPY_CACHE) >"$$typed" 2>&1 & mypy=$$!; \
	echo ".venv/bin/mypy $(MYPY_CACHE) (beside the tests; its report follows them)"; \
	echo ".venv/bin/python -m pytest -q -n 3 --dist loadfile --durations=20 $(PYTEST_ARGS)"; \
	env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest -q -n 3 --dist loadfile --durations=20 $(PYTEST_ARGS); tests=$$?; \
	wait $$mypy; checked=$$?; echo "mypy:"; cat "$$typed"; rm -f "$$typed"; \
	[ $$tests -eq 0 ] && [ $$checked -eq 0 ]

setup:
	bash scripts/setup test

lint:  # what `make test` checks besides the tests: ruff, then mypy (its per-module strictness: pyproject.toml)
	.venv/bin/ruff check .
	.venv/bin/mypy
