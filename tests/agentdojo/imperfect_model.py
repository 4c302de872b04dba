"""A seeded, imperfect OpenAI-compatible model for the AgentDojo cross-check (served by
tests/agents/openai_stub.py). Every reply is a function of the seed and the request alone (clock
stamps masked), so two runners that send it the same requests get the same replies.

It works from the user task's ground truth, badly: it calls wrong tools, drops and mistypes
arguments, makes two calls in one reply, stops early, loops past AgentDojo's 15 rounds on some
tasks, answers with no content (AgentDojo then runs its pipeline again) or an empty or wrong
text, and follows an injection it reads (all of the injection task's calls in one reply) more
often than not. It never sends argument text that is not JSON: AgentDojo's script crashes on it.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from openai_stub import Reply

from environments.agentdojo.benchmark import task_suite
from environments.agentdojo.env import compact, pre_environment_of
from suites.agentdojo.model_crosscheck import STAMP, user_text


def _calls(task: Any, environment: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function, dict(c.args)) for c in task.ground_truth(environment)]


class ImperfectModel:
    def __init__(self, suites: tuple[str, ...], seed: int = 47, user_tasks: set[tuple[str, str]] | None = None) -> None:
        """``user_tasks`` (suite, user task): the tasks it will be asked, planned up front (every user task
        of ``suites`` when None); a test runs a third of them or fewer, and each plan builds the task's
        environment. A planned prompt is answered by the last user task with that prompt, as before."""
        self.seed = seed
        self.plans: dict[str, tuple[list[tuple[str, dict[str, Any]]], str]] = {}
        self.unplanned: set[str] = set()  # prompts of user tasks it was not told of: asked one, it refuses
        self.injections: list[tuple[str, list[tuple[str, dict[str, Any]]], str]] = []
        tasks: dict[str, tuple[str, str]] = {}  # prompt -> (suite, user task)
        for name in suites:
            suite = task_suite(name)
            for user_task, task in suite.user_tasks.items():
                tasks[task.PROMPT] = (name, user_task)
            env = suite.load_and_inject_default_environment({})
            for injection in suite.injection_tasks.values():
                self.injections.append((injection.GOAL, _calls(injection, env), injection.GROUND_TRUTH_OUTPUT))
        wanted = {task_suite(n).user_tasks[u].PROMPT for n, u in user_tasks} if user_tasks is not None else set(tasks)
        for prompt, (name, user_task) in tasks.items():  # in the test's thread: building one freezes the clock
            if prompt not in wanted:
                self.unplanned.add(prompt)
                continue
            task = task_suite(name).user_tasks[user_task]
            env = pre_environment_of({"suite": name, "user_task": user_task, "injections": {}})
            self.plans[prompt] = (_calls(task, env), task.GROUND_TRUTH_OUTPUT)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        key = hashlib.sha256(f"{self.seed}:{STAMP.sub('<t>', json.dumps(messages, sort_keys=True))}".encode()).hexdigest()
        rng = random.Random(key)
        prompt = user_text(body)
        if prompt in self.unplanned:
            raise KeyError(f"a user task it was not told of: {prompt[:80]!r}")
        plan, answer = self.plans.get(prompt, ([], "Done."))
        if body.get("tool_choice") == "none":  # a tool filter's question
            reply = self._choose(plan, [t["function"]["name"] for t in body.get("tools") or []], rng)
            reply.ident = key[:16]
            return reply
        persona = random.Random(f"{self.seed}:{prompt}").random()
        made = [(c["function"]["name"], c["function"]["arguments"]) for m in messages if m["role"] == "assistant"
                for c in m.get("tool_calls") or []]
        results = " ".join(_text(m["content"]) for m in messages if m["role"] == "tool")
        reply = self._follow(results, made, rng) or self._work(plan, answer, made, persona, rng)
        reply.ident = key[:16]
        return reply

    @staticmethod
    def _choose(plan: list[tuple[str, dict[str, Any]]], offered: list[str], rng: random.Random) -> Reply:
        """Names the plan's tools, badly: one too few, a stray one, or no answer at all."""
        wanted = sorted({name for name, _ in plan if name in offered})
        roll = rng.random()
        if roll < 0.05:
            return Reply(content=None)
        if roll < 0.2 and wanted:
            wanted.pop(rng.randrange(len(wanted)))
        elif roll < 0.35 and offered:
            wanted.append(rng.choice(offered))
        return Reply(content="The tools needed: " + ", ".join(wanted))

    def _follow(self, results: str, made: list[tuple[str, str]], rng: random.Random) -> Reply | None:
        read = compact(results)  # once, not once per injection task (env.mentions compacts both sides)
        for goal, calls, _ in self.injections:
            if calls and (needle := compact(goal)) and needle in read \
                    and (calls[0][0], json.dumps(calls[0][1])) not in made:
                if rng.random() < 0.6:
                    return Reply(tool_calls=[(f, json.dumps(a)) for f, a in calls])
        return None

    def _work(self, plan: list[tuple[str, dict[str, Any]]], answer: str, made: list[tuple[str, str]], persona: float,
              rng: random.Random) -> Reply:
        if persona < 0.12 and plan:  # a looper: reads the same thing again and again
            name, args = plan[0]
            return Reply(tool_calls=[(name, json.dumps(args))], content=None if persona < 0.06 else "Checking again.")
        step = len(made)
        if step < len(plan) and rng.random() > 0.08:
            roll = rng.random()
            name, args = plan[step]
            if roll < 0.15 and step + 1 < len(plan):
                other, more = plan[step + 1]
                return Reply(tool_calls=[(name, json.dumps(args)), (other, json.dumps(more))])
            if roll < 0.25:
                return Reply(tool_calls=[(name + "_v2", json.dumps(args))])
            if roll < 0.35 and args:
                dropped = dict(args)
                dropped.pop(rng.choice(sorted(dropped)))
                return Reply(tool_calls=[(name, json.dumps(dropped))])
            if roll < 0.42 and args:
                wrong = dict(args)
                wrong[rng.choice(sorted(wrong))] = [["not", "this"]]
                return Reply(tool_calls=[(name, json.dumps(wrong))])
            return Reply(tool_calls=[(name, json.dumps(args))], content="Next step." if roll > 0.8 else None)
        roll = rng.random()
        if roll < 0.12:
            return Reply(content=None)
        if roll < 0.17:
            return Reply(content="")
        if roll < 0.27:
            return Reply(content="I could not find it.")
        return Reply(content=answer or "Done.")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [])
