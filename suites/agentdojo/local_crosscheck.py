"""A model under both runners: AgentDojo's benchmark functions with its ``--model local`` pipeline
(``LocalLLM`` on an OpenAI-compatible server), and agentbed's episodes of the same element
(:class:`environments.agentdojo.protocol.DojoAgent` with AgentDojo's ``LocalLLM``) on the same server, task by task.

``python -m suites.agentdojo.local_crosscheck --out DIR [--task TASK ...]`` starts the local model
(Gemma 3 270M on llama.cpp, temperature 0) and runs both; take the machine's model lock:
``flock /tmp/agentbed-llama.lock python -m suites.agentdojo.local_crosscheck ...``.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from environments.agentdojo.benchmark import BENCHMARK_VERSION, TaskId, task_suite
from suites.agentdojo.crosscheck import Scores, quiet_logger

LOCAL_VICTIM = "local"  # AgentDojo's runner names its local pipeline "local": its attacks address "Local model"
DEFAULT_TASKS = ("banking.user_task_1", "banking.user_task_1.injection_task_0.important_instructions")
MAX_TOKENS = 64


class _CappedCompletions:
    """An OpenAI client whose chat completions carry ``max_tokens`` (all else passes through)."""

    def __init__(self, client: Any, max_tokens: int) -> None:
        self._client, self._max_tokens = client, max_tokens
        self.chat = self
        self.completions = self

    def create(self, **kwargs: Any) -> Any:
        return self._client.chat.completions.create(**kwargs, max_tokens=self._max_tokens)


@contextmanager
def completion_cap(max_tokens: int) -> Iterator[None]:
    """Cap every completion AgentDojo's ``LocalLLM`` asks for, in both runners alike. It sets no
    cap of its own, and a 270M base model writes until its context is full (3300 tokens, eight
    minutes a call on this CPU); the cap is the one change made to AgentDojo's path, said so in
    docs/agentdojo.md."""
    from agentdojo.agent_pipeline.llms import local_llm

    original = local_llm.chat_completion_request

    def capped(client: Any, model: str, messages: Any, temperature: float | None = 1.0, top_p: float | None = 0.9
               ) -> str:
        return original(_CappedCompletions(client, max_tokens), model, messages, temperature, top_p)

    local_llm.chat_completion_request = capped
    try:
        yield
    finally:
        local_llm.chat_completion_request = original


def their_local(tasks: Sequence[TaskId], base_url: str, model_id: str, logdir: str | Path) -> dict[TaskId, Scores]:
    """AgentDojo's per-task benchmark functions with the pipeline its script builds for ``--model local``."""
    from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline, PipelineConfig
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.benchmark import run_task_with_injection_tasks, run_task_without_injection_tasks

    os.environ["LOCAL_LLM_PORT"] = str(urlparse(base_url).port)  # how AgentDojo's local provider finds its server
    pipeline = AgentPipeline.from_config(PipelineConfig(llm="local", model_id=model_id, defense=None,
                                                        system_message_name=None, system_message=None))
    out = {}
    with warnings.catch_warnings(), quiet_logger(logdir):
        warnings.simplefilter("ignore")
        for tid in tasks:
            suite = task_suite(tid.suite)
            user = suite.user_tasks[tid.user_task]
            if tid.injection_task is None:
                utility, _ = run_task_without_injection_tasks(suite, pipeline, user, Path(logdir), True, BENCHMARK_VERSION)
                out[tid] = Scores(bool(utility), None)
            else:
                utilities, securities = run_task_with_injection_tasks(
                    suite, pipeline, user, load_attack(str(tid.attack), suite, pipeline), Path(logdir), True,
                    [tid.injection_task], BENCHMARK_VERSION)
                key = (tid.user_task, tid.injection_task)
                out[tid] = Scores(bool(utilities[key]), bool(securities[key]))
    return out


def ours_local(tasks: Sequence[TaskId], base_url: str, model_id: str, run_dir: str | Path) -> dict[TaskId, Scores]:
    """agentbed's episodes of AgentDojo's ``LocalLLM`` element on the same server, logged under ``run_dir``."""
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import EpisodeSpec, run_episode
    from environments.agentdojo.protocol import DojoAgent, LocalElement
    from suites.agentdojo.suite import SUITE

    options = SUITE.resolve_options({"victim": LOCAL_VICTIM})
    out = {}
    for tid in tasks:
        env = SUITE.make_env(str(tid), options)
        spec = EpisodeSpec("agentdojo", str(tid), "agentdojo-local", 0, options)
        agent = DojoAgent(LocalElement(base_url, model_id), name="agentdojo-local").bind(env)
        record = run_episode(env, agent, spec, budget=SUITE.budget,
                             writer=TrajectoryWriter(spec.log_in(run_dir)))
        if record.status == "error":
            raise RuntimeError(f"{tid}: {record.error[-300:]}")
        out[tid] = Scores(record.metrics["utility"], record.metrics["attack_success"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from agentbed.agents.local.server import ServerSettings, serving
    from agentbed.agents.local.weights import DEFAULT_MODEL
    from suites.agentdojo.crosscheck import compare

    parser = argparse.ArgumentParser(prog="python -m suites.agentdojo.local_crosscheck", description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--task", action="append", help=f"task id (default: {', '.join(DEFAULT_TASKS)})")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help="completion cap in both runners")
    args = parser.parse_args(argv)
    tasks = [TaskId.parse(t).check() for t in (args.task or DEFAULT_TASKS)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = f"local:{DEFAULT_MODEL}"
    # AgentDojo's prompt lists every tool as indented JSON: a banking episode needs ~6-10k tokens of context
    with serving([f"model:{model}"], out, ServerSettings(ctx=16384, slots=1), exit_on_sigterm=True) as urls, \
            completion_cap(args.max_tokens):
        base_url = urls[model]
        model_id = Path(DEFAULT_MODEL).stem
        theirs = their_local(tasks, base_url, model_id, out / "agentdojo-logs")
        ours = ours_local(tasks, base_url, model_id, out / "agentbed")
    rows: list[dict[str, Any]] = [{"task": str(t), "agentdojo": vars(theirs[t]), "agentbed": vars(ours[t])}
                                  for t in tasks]
    differences = [str(d.task) for d in compare(ours, theirs)]
    (out / "local_crosscheck.json").write_text(json.dumps({"model": model, "max_tokens": args.max_tokens, "rows": rows,
                                                           "differences": differences}, indent=1))
    for row in rows:
        print(json.dumps(row))
    print(f"{len(tasks) - len(differences)} of {len(tasks)} tasks agree")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
