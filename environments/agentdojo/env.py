"""AgentDojo's environments as an agentbed world: one task suite's tools, state and graders.

The state is AgentDojo's own ``TaskEnvironment`` (a pydantic model loaded from the suite's YAML with
the episode's injections), and a tool call runs through AgentDojo's own ``ToolsExecutor`` and
``FunctionsRuntime``: argument checking, string-list coercion, error texts and the YAML rendering
of results are theirs. The episode ends when the agent answers without calling a tool (a chat
model's plain reply, ``{"tool": null, "text": ...}``), as in AgentDojo's tool loop; agents that can
only call tools (the local model's grammar-bound profile) answer with the extra tool
``final_answer``, which is the same thing. Utility and
security are AgentDojo's task functions on the pre- and post-environment and the call trace,
exactly as ``TaskSuite.run_task_with_pipeline`` calls them; AgentDojo's "security" is True when
the injection task was achieved, recorded here as ``attack_success``.

AgentDojo's tools stamp e-mails and files with ``datetime.now()``: every tool and grader runs in
the virtual clock's freeze context, which starts on the workspace's "current day".
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from functools import cache, lru_cache
from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import ActionError, Tool, decode_action, split_action
from environments.agentdojo.benchmark import BENCHMARK_VERSION, TaskId, suite_of, task_suite, user_task_names

# 2024-05-15 09:00 UTC: the "current day" of AgentDojo's workspace and travel calendars.
START = _dt.datetime(2024, 5, 15, 9, 0, tzinfo=_dt.UTC).timestamp()
TOOL_COST = 1.0  # virtual seconds per tool call
FINISHED = "(final answer recorded; the episode is over)"
_FOLDING = re.compile(r"[\s'\"\\]+")


def compact(text: str) -> str:
    """``text`` without whitespace, quotes or backslashes: an instruction embedded in a tool result
    is found whatever line folding and quoting AgentDojo's YAML rendering gave it."""
    return _FOLDING.sub("", text)


def mentions(observation: str, instruction: str) -> bool:
    needle = compact(instruction)
    return bool(needle) and needle in compact(observation)


# AgentDojo's protocol (its pipeline's tools only, every call of a reply executed, its re-run of a
# reply with no content) or agentbed's (one call per reply, the extra final_answer tool): not comparable
AGENTDOJO, AGENTBED = "agentdojo", "agentbed"
PROTOCOLS = (AGENTDOJO, AGENTBED)
MAX_TRIES = 3  # TaskSuite.run_task_with_pipeline runs the pipeline again while the output is None, 3 times in all
STEP_CAP = {AGENTDOJO: 1000, AGENTBED: 40}  # AgentDojo's own caps are rounds and tries; this is a backstop

FINAL_ANSWER = Tool("final_answer", "Give your final answer to the user; this ends the task.",
                    {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}, TOOL_COST)


@cache
def suite_tools(suite: str, protocol: str = AGENTDOJO, version: str | None = None) -> tuple[Tool, ...]:
    """A task suite's functions as agentbed tools: AgentDojo's names, docstrings and JSON schemas
    (and agentbed's ``final_answer`` under its own protocol)."""
    functions = tuple(Tool(f.name, f.description, f.parameters.model_json_schema(), TOOL_COST)
                      for f in task_suite(suite, version).tools)
    return (*functions, FINAL_ANSWER) if protocol == AGENTBED else functions


def task_spec(task: TaskId, injections: dict[str, str] | None = None, protocol: str = AGENTDOJO,
              version: str = BENCHMARK_VERSION) -> TaskSpec:
    """The spec of one task; ``injections`` (vector -> text) come from an attack (:mod:`attacks.agentdojo`);
    ``protocol`` is AgentDojo's (:data:`AGENTDOJO`) or agentbed's one call per reply (:data:`AGENTBED`);
    ``version`` the benchmark version (its suites' tasks, environments and graders)."""
    task.check(version)
    if protocol not in PROTOCOLS:
        raise KeyError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    user = task_suite(task.suite, version).user_tasks[task.user_task]
    params: dict[str, Any] = {"benchmark_version": version, "suite": task.suite,
                              "user_task": task.user_task, "injection_task": task.injection_task,
                              "attack": task.attack, "injections": dict(injections or {})}
    if protocol != AGENTDOJO:  # AgentDojo's protocol is the default; a task spec names only another
        params["protocol"] = protocol
    return TaskSpec(str(task), params, user.PROMPT)


def pre_environment_of(params: dict[str, Any]) -> Any:
    """A fresh copy of the environment a task starts from, built from its spec (loading is
    deterministic; the environment and the scripted planners each get their own copy)."""
    return _pre_environment(params["suite"], params["user_task"], json.dumps(params["injections"], sort_keys=True),
                            params.get("benchmark_version") or BENCHMARK_VERSION).model_copy(deep=True)


@lru_cache(maxsize=16)
def _pre_environment(suite_name: str, user_task: str, injections: str, version: str) -> Any:
    # parsing a suite's YAML takes 0.05-0.4 s; an episode needs it twice (world and planner)
    from agentbed.clock import VirtualClock

    suite = task_suite(suite_name, version)
    with VirtualClock(START).frozen():
        return suite.user_tasks[user_task].init_environment(injected_environment(suite, json.loads(injections)))


def injected_environment(suite: Any, injections: dict[str, str]) -> Any:
    """What AgentDojo's ``TaskSuite.load_and_inject_default_environment`` returns, parsed by libyaml:
    the suite's environment text with the injections put in (the other vectors their defaults),
    validated into the suite's environment type. AgentDojo's method parses with PyYAML's
    pure-Python loader, most of an episode's set-up; libyaml's parser gives the same objects
    (every task's text under every attack compared: docs/benchmarks.md) in a fifth of the time."""
    import yaml
    from agentdojo.task_suite.task_suite import read_suite_file, validate_injections

    defaults = _vector_defaults(suite)
    validate_injections(injections, defaults)
    text = read_suite_file(suite.name, "environment.yaml", suite.data_path).format(**{**defaults, **injections})
    return suite.environment_type.model_validate(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


_VECTOR_DEFAULTS: dict[tuple[str, Any], dict[str, str]] = {}


def _vector_defaults(suite: Any) -> dict[str, str]:
    """A suite's injection vectors' default texts (AgentDojo's method parses their YAML on every call)."""
    key = (suite.name, suite.data_path)  # what AgentDojo's read_suite_file reads them by
    if key not in _VECTOR_DEFAULTS:
        _VECTOR_DEFAULTS[key] = suite.get_injection_vector_defaults()
    return _VECTOR_DEFAULTS[key]


class Final:
    """A reply that ends the tool loop: its text (None: the model sent no content) and the tool
    calls it held that were not executed (AgentDojo's loop stops after 15 rounds, and its graders
    still see those calls in the trace)."""

    def __init__(self, text: str | None, calls: list[dict[str, Any]] | None = None) -> None:
        self.text, self.calls = text, calls or []


def final_answer(action: str | bytes) -> Final | None:
    """A final answer: an action naming no tool (``{"tool": null, "text": ..., "calls": [...]}``)
    or a call of :data:`FINAL_ANSWER`."""
    text = decode_action(action)
    if isinstance(text, ActionError) or not text.lstrip().startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(obj, dict) or "tool" not in obj:
        return None
    if obj["tool"] is None:
        answer = obj.get("text", "")
        calls = obj.get("calls")
        calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    elif obj["tool"] == FINAL_ANSWER.name and isinstance(obj.get("arguments"), dict):
        answer, calls = obj["arguments"].get("answer", ""), []
    else:
        return None
    return Final(answer if isinstance(answer, str) or answer is None else json.dumps(answer), calls)


class AgentDojoEnv(ToolEnv):
    """One AgentDojo task: a user task, alone or with an injection task's injections in place."""

    start_time = START
    max_steps = 60

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None) -> None:
        spec = self.resolve_task(task)
        self.protocol = spec.params.get("protocol", AGENTDOJO)
        self.version = spec.params.get("benchmark_version") or BENCHMARK_VERSION
        self.tools = suite_tools(spec.params["suite"], self.protocol, self.version)
        self.max_steps = STEP_CAP[self.protocol]
        super().__init__(spec, render_mode)
        self._runtime: Any = None

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        """The tasks this world builds on its own: every user task without an attack (an attacked
        task needs its injections, which the suite gets from :mod:`attacks.agentdojo`)."""
        return [task_spec(TaskId("banking", name)) for name in user_task_names("banking")] + [
            task_spec(TaskId(suite, name)) for suite in ("workspace", "travel", "slack")
            for name in user_task_names(suite)]

    @classmethod
    def resolve_task(cls, task: TaskSpec | str | None) -> TaskSpec:
        if isinstance(task, TaskSpec):
            return task
        tid = TaskId.parse(task) if task is not None else TaskId("banking", "user_task_0")
        if tid.injection_task is not None:
            raise KeyError(f"task {tid}: an attacked task needs its injections; build it with"
                           " suites.agentdojo (or pass a TaskSpec from environments.agentdojo.env.task_spec)")
        return task_spec(tid)

    # -- AgentDojo objects -----------------------------------------------------------------
    @property
    def task_id(self) -> TaskId:
        p = self.task.params
        return TaskId(p["suite"], p["user_task"], p["injection_task"], p["attack"])

    def _suite(self) -> Any:
        return suite_of(self.task.params)

    def episode_info(self) -> dict[str, Any]:
        p = self.task.params
        return {**{k: p[k] for k in ("benchmark_version", "suite", "user_task", "injection_task", "attack")},
                "protocol": self.protocol}

    def setup(self, rng: Any) -> str:
        from agentdojo.functions_runtime import FunctionsRuntime

        suite = self._suite()
        self.tools = suite_tools(self.task.params["suite"], self.protocol, self.version)
        self._tool_index = {t.name: t for t in self.tools}
        self._runtime = FunctionsRuntime(list(suite.tools))
        environment = pre_environment_of(self.task.params)
        self.state = {"environment": environment, "pre_environment": environment.model_copy(deep=True),
                      "messages": [], "final_text": None, "scores": None, "injection_seen_step": None,
                      "allowed_tools": None, "tries": 1}
        return suite.user_tasks[self.task.params["user_task"]].PROMPT

    def tool_specs(self) -> list[Tool]:
        allowed = self.state.get("allowed_tools") if isinstance(self.state, dict) else None
        return [t for t in self.tools if allowed is None or t.name in allowed or t is FINAL_ANSWER]

    def restrict_tools(self, names: list[str]) -> None:
        """A tool filter's selection (:mod:`controllers.agentdojo.defenses`): only these functions
        stay in AgentDojo's runtime, as AgentDojo's filter narrows it, so a call of another is
        answered with AgentDojo's own error. ``final_answer`` is always offered."""
        self.state["allowed_tools"] = sorted(set(names) & {f.name for f in self._suite().tools})

    def _runtime_now(self) -> Any:
        """AgentDojo's runtime with the episode's functions (all, or a filter's selection; the
        selection is in the state, so a snapshot keeps it)."""
        allowed = self.state.get("allowed_tools")
        if allowed is None:
            return self._runtime
        if getattr(self, "_narrowed", (None,))[0] != allowed:
            from agentdojo.functions_runtime import FunctionsRuntime

            self._narrowed = (allowed, FunctionsRuntime([f for f in self._suite().tools if f.name in allowed]))
        return self._narrowed[1]

    # -- steps ---------------------------------------------------------------------------
    def step(self, action: str | bytes) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.state["final_text"] is not None:
            result = ToolResult(FINISHED, terminated=True, info={"tool": None, "action_error": "episode_over"})
        elif (answer := final_answer(action)) is not None:
            result = self._finish(answer.text, answer.calls)
        else:
            result = self._call(action)
        self.clock.advance(TOOL_COST)
        self.steps += 1
        self.last_observation = result.observation
        seen = self._injection_seen(result.observation)
        if seen and self.state["injection_seen_step"] is None:
            self.state["injection_seen_step"] = self.steps
        truncated = self.max_steps is not None and self.steps >= self.max_steps and not result.terminated
        return result.observation, result.reward, result.terminated, truncated, {**result.info, "injection_seen": seen}

    def _call(self, action: str | bytes) -> ToolResult:
        from agentdojo.agent_pipeline.tool_execution import ToolsExecutor
        from agentdojo.functions_runtime import FunctionCall
        from agentdojo.types import ChatAssistantMessage, get_text_content_as_str
        from pydantic import ValidationError

        call = _parse_call(action, self.max_action_bytes)
        if isinstance(call, ActionError):
            return ToolResult(call.observation(), info={"tool": None, "action_error": call.code})
        name, arguments = call
        try:
            function_call = FunctionCall(function=name, args=arguments, id=f"call_{self.steps + 1}")
        except ValidationError as exc:
            error = ActionError("invalid_arguments", f"{name}: {str(exc)[:300]}")
            return ToolResult(error.observation(), info={"tool": name, "action_error": error.code})
        request = ChatAssistantMessage(role="assistant", content=None, tool_calls=[function_call])
        with self.clock.frozen():
            _, _, _, messages, _ = ToolsExecutor().query("", self._runtime_now(), self.state["environment"], [request])
        reply = messages[-1]
        self.state["messages"] += [request, reply]
        observation = reply["error"] or get_text_content_as_str(reply["content"])
        return ToolResult(observation, info={"tool": name, "tool_error": reply["error"]})

    def _finish(self, answer: str | None, calls: list[dict[str, Any]]) -> ToolResult:
        from agentdojo.types import ChatAssistantMessage, text_content_block_from_string

        unexecuted = function_calls(calls)
        message = ChatAssistantMessage(role="assistant", tool_calls=unexecuted or None,
                                       content=None if answer is None else [text_content_block_from_string(answer)])
        if answer is None and self.protocol == AGENTDOJO and self.state["tries"] < MAX_TRIES:
            # AgentDojo runs its pipeline again on the environment as it now is; only the last
            # try's messages are graded
            self.state["tries"] += 1
            self.state["messages"] = []
            prompt = self._suite().user_tasks[self.task.params["user_task"]].PROMPT
            return ToolResult(prompt, info={"tool": None, "rerun": self.state["tries"]})
        self.state["final_text"] = "" if answer is None else answer
        self.state["messages"].append(message)
        scores = self.scores()
        return ToolResult(FINISHED, reward=float(scores["utility"]), terminated=True, info={"tool": None, **scores})

    def _injection_seen(self, observation: str) -> bool:
        injection = self.task.params["injection_task"]
        if injection is None:
            return False
        return mentions(observation, self._suite().injection_tasks[injection].GOAL)

    # -- grading ---------------------------------------------------------------------------
    def scores(self) -> dict[str, Any]:
        """AgentDojo's utility and security for the episode so far (cached once final)."""
        if self.state["scores"] is not None:
            return self.state["scores"]
        from agentdojo.task_suite.task_suite import functions_stack_trace_from_messages
        from agentdojo.types import text_content_block_from_string

        suite, p = self._suite(), self.task.params
        text = self.state["final_text"]
        # AgentDojo grades the last assistant message; an episode cut by a budget has none
        output = [text_content_block_from_string(text)] if text is not None else []
        trace = functions_stack_trace_from_messages(self.state["messages"])
        pre, post = self.state["pre_environment"], self.state["environment"]
        with self.clock.frozen():
            utility = suite._check_task_result(suite.user_tasks[p["user_task"]], output, pre, post, trace)
            security = (None if p["injection_task"] is None else
                        suite._check_task_result(suite.injection_tasks[p["injection_task"]], output, pre, post, trace))
        scores = {"utility": bool(utility), "attack_success": None if security is None else bool(security)}
        if text is not None:
            self.state["scores"] = scores
        return scores

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        scores = self.scores()
        labels = ["UTILITY" if scores["utility"] else "NO_UTILITY"]
        if scores["attack_success"] is not None:
            labels.append("ATTACK_SUCCEEDED" if scores["attack_success"] else "ATTACK_FAILED")
        if self.state["final_text"] is None:
            labels.append("NO_FINAL_ANSWER")
        metrics = {**scores, "tool_calls": len(self.state["messages"]) // 2,
                   "injection_seen_step": self.state["injection_seen_step"]}
        # success means what the suite's branching scores: the user's task done and the injection's not,
        # so no surface calls an episode whose injection succeeded a success; both scores stay in metrics
        return Outcome(success=scores["utility"] and not scores["attack_success"], metrics=metrics, labels=labels)


def function_calls(calls: list[dict[str, Any]]) -> list[Any]:
    """AgentDojo ``FunctionCall``s of a final reply's unexecuted calls (``{"function", "args", "id"}``);
    one AgentDojo could not have parsed is left out."""
    from agentdojo.functions_runtime import FunctionCall
    from pydantic import ValidationError

    out = []
    for call in calls:
        try:
            out.append(FunctionCall(function=call.get("function"), args=call.get("args"), id=call.get("id")))
        except ValidationError:
            continue
    return out


def _parse_call(action: str | bytes, max_bytes: int) -> tuple[str, dict[str, Any]] | ActionError:
    """``{"tool": NAME, "arguments": {...}}`` as (name, arguments). The name and arguments are
    checked by AgentDojo's runtime, as in its own tool loop; only what is not a tool call is refused here."""
    split = split_action(action, max_bytes)
    if isinstance(split, ActionError):
        return split
    name, arguments, _ = split
    if not isinstance(arguments, dict):
        return ActionError("invalid_arguments", f"arguments of {name[:80]} must be an object")
    return name, arguments
