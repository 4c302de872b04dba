# The two commands of the README. Each does its own set-up (scripts/setup).
.PHONY: demo test setup lint bench

demo:
	bash scripts/setup demo
	.venv/bin/agentbed demo

test:
	bash scripts/setup test
	.venv/bin/ruff check .
	.venv/bin/mypy
	.venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=20  # two workers, each test file on one (docs/benchmarks.md)

setup:
	bash scripts/setup test

lint:  # what `make test` checks first: ruff, then mypy (its per-module strictness: pyproject.toml)
	.venv/bin/ruff check .
	.venv/bin/mypy
