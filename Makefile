# The two commands of the README. Each does its own set-up (scripts/setup).
.PHONY: demo test setup lint bench

demo:
	bash scripts/setup demo
	.venv/bin/agentbed demo

# Three xdist workers on the two cores: many test files wait on a sandbox, a server or a timer (Ray,
# Docker, the chaos provider), and with two workers the cores were idle 11-16% of a quiet run; a
# third fills that (3% idle, tests 19 min 41 s -> 17 min 41 s; docs/benchmarks.md, session 22).
# mypy (about 75 s of one core with no cache, as on a fresh clone) runs beside the tests at a lower
# priority, taking the time the workers leave a core idle; its report follows the tests', and
# either failing fails `make test` (docs/benchmarks.md). `make lint` runs it alone, first.
# PYTEST_ARGS (empty unless given, e.g. from the environment) goes to pytest: with
# PYTEST_ARGS="--record-file-costs tests/file_costs.json" the run rewrites the schedule's table.
test:
	bash scripts/setup test
	.venv/bin/ruff check .
	@typed="$$(mktemp)"; nice -n 10 .venv/bin/mypy >"$$typed" 2>&1 & mypy=$$!; \
	echo ".venv/bin/mypy (beside the tests; its report follows them)"; \
	echo ".venv/bin/python -m pytest -q -n 3 --dist loadfile --durations=20 $(PYTEST_ARGS)"; \
	.venv/bin/python -m pytest -q -n 3 --dist loadfile --durations=20 $(PYTEST_ARGS); tests=$$?; \
	wait $$mypy; checked=$$?; echo "mypy:"; cat "$$typed"; rm -f "$$typed"; \
	[ $$tests -eq 0 ] && [ $$checked -eq 0 ]

setup:
	bash scripts/setup test

lint:  # what `make test` checks besides the tests: ruff, then mypy (its per-module strictness: pyproject.toml)
	.venv/bin/ruff check .
	.venv/bin/mypy
