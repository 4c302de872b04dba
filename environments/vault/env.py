"""The vault: a token must be fetched and used before it expires.

Tasks differ in the token's lifetime and in the chores (reading log pages, each costing
virtual time) the instructions require before the vault may be opened, so an agent that
fetches the token first and uses it last sees it expire. The ``echo`` task is a single-step
task used by the runner throughput benchmark; ``proof-of-work`` makes the agent burn CPU
(a SHA-256 nonce search), the CPU-bound load of the executor benchmark.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import tool

_TASKS = [
    TaskSpec("open-fast", {"ttl": 60, "chores": 0}, "Fetch a token and open the vault."),
    TaskSpec("open-after-chores", {"ttl": 30, "chores": 2}, "Read two log pages, then open the vault."),
    TaskSpec("long-chores", {"ttl": 45, "chores": 4}, "Read four log pages, then open the vault."),
    TaskSpec("echo", {"ttl": 0, "chores": 0, "echo": True}, "Submit the word shown."),
    TaskSpec("proof-of-work", {"ttl": 0, "chores": 0, "difficulty": 4},
             "Find a nonce whose SHA-256 with the challenge starts with four zero hex digits."),
]

# The audit log's pages. Tasks ask for at most four; the scripted agents read pages 1-5 (oversight's
# random actions), one test page 9. Without a maximum, llama.cpp's grammar let the local base model
# write 16-digit pages (``"page": 1000000000000000``, 41 tokens a reply where other tools take 21); with
# one digit a page is one token.
LOG_PAGES = 9
# The longest token and answer a tool takes (prove's nonce has had this maximum): issued tokens are 32
# hex digits, the echo word six letters. Without one the grammar let the base model run a submitted
# answer on to its token cap (96 tokens, five times in an episode of the demo's slice).
MAX_TEXT = 64
INVALID_TOKEN = {"error": "invalid_token", "error_description": "The access token is invalid"}
EXPIRED_TOKEN = {"error": "invalid_token", "error_description": "The access token expired"}


class VaultEnv(ToolEnv):
    tools = (
        tool("get_token", "Issue a fresh access token for the vault.", cost=1.0),
        tool("read_logs", "Read one page of the audit log (slow).", cost=15.0,
             page={"type": "integer", "minimum": 1, "maximum": LOG_PAGES}),
        tool("wait", "Wait some virtual seconds.", cost=0.0, seconds={"type": "number", "minimum": 0, "maximum": 3600}),
        tool("open_vault", "Open the vault with an access token.", cost=1.0,
             token={"type": "string", "maxLength": MAX_TEXT}),
        tool("submit", "Submit an answer (echo task).", cost=0.0,
             answer={"type": "string", "maxLength": MAX_TEXT}),
        tool("prove", "Submit a proof-of-work nonce.", cost=1.0, nonce={"type": "string", "maxLength": MAX_TEXT}),
    )
    max_steps = 30

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return list(_TASKS)

    def setup(self, rng: Any) -> str:
        self.state = {"issued": {}, "pages_read": [], "opened": False, "labels": [],
                      "word": "".join(rng.choice(list("abcdefgh"), size=6).tolist())}
        p = self.task.params
        if p.get("difficulty"):
            self.state["challenge"] = f"{int(rng.integers(1 << 62)):016x}"
            return json.dumps({"task": "proof-of-work", "challenge": self.state["challenge"],
                               "difficulty": p["difficulty"]})
        if p.get("echo"):
            return json.dumps({"task": "echo", "word": self.state["word"]})
        return json.dumps({"task": self.task.description, "ttl_seconds": p["ttl"], "chores": p["chores"],
                           "now": self.clock.isoformat()})

    def tool_get_token(self) -> ToolResult:
        token = hashlib.sha256(f"{self.np_random.integers(1 << 62)}".encode()).hexdigest()[:32]
        expires = self.clock.now() + self.task.params["ttl"]
        self.state["issued"][token] = expires
        return ToolResult(json.dumps({"access_token": token, "expires_in": self.task.params["ttl"]}))

    def tool_read_logs(self, page: int) -> ToolResult:
        if page not in self.state["pages_read"]:
            self.state["pages_read"].append(page)
        return ToolResult(json.dumps({"page": page, "entries": [f"entry {page}.{i}" for i in range(3)]}))

    def tool_wait(self, seconds: float) -> ToolResult:
        return ToolResult(json.dumps({"waited": seconds}), elapsed=float(seconds))

    def tool_open_vault(self, token: str) -> ToolResult:
        chores_done = len(self.state["pages_read"]) >= self.task.params["chores"]
        expires = self.state["issued"].get(token)
        if expires is None:
            self.state["labels"].append("WRONG_VALUE")
            return ToolResult(json.dumps({"status": 401, **INVALID_TOKEN}))
        if self.clock.now() >= expires:
            self.state["labels"].append("EXPIRED_BEFORE_USE")
            return ToolResult(json.dumps({"status": 401, **EXPIRED_TOKEN}))
        if not chores_done:
            self.state["labels"].append("SHORTCUT_TAKEN")
            return ToolResult(json.dumps({"status": 409, "error": "chores_pending"}))
        self.state["opened"] = True
        return ToolResult(json.dumps({"status": 200, "vault": "opened"}), reward=1.0, terminated=True)

    def tool_submit(self, answer: str) -> ToolResult:
        ok = answer == self.state["word"]
        self.state["opened"] = ok
        return ToolResult(json.dumps({"correct": ok}), reward=float(ok), terminated=True)

    def tool_prove(self, nonce: str) -> ToolResult:
        digest = hashlib.sha256((self.state.get("challenge", "") + nonce).encode()).hexdigest()
        ok = "challenge" in self.state and digest.startswith("0" * self.task.params["difficulty"])
        self.state["opened"] = ok
        return ToolResult(json.dumps({"valid": ok, "digest": digest}), reward=float(ok), terminated=ok)

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        labels = sorted(set(self.state["labels"])) if self.state else []
        return Outcome(success=bool(self.state and self.state["opened"]),
                       metrics={"pages_read": len(self.state["pages_read"]) if self.state else 0},
                       labels=labels or (["SUCCESS"] if self.state and self.state["opened"] else ["OTHER"]))
