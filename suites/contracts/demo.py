"""The demo behind ``agentbed demo``: oracle, naive (without and with feedback), work-first and
param-drift over every task, 3 seeds, through the engine's process executor; the corruption matrix
(every pipeline over every task it applies to, seed 0); the vault world's scripted agents
(suites/vault/demo.py); pass-rate figures; and the findings the lead's one-screen summary shows.
Every agent here is scripted (the findings say so) but one: the local model (Gemma 3 270M, a base
model, on this CPU) on a handful of contracts tasks and the vault's tasks, when it is installed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from agentbed.executors import execute
from agentbed.progress import steps
from agentbed.results import episode_metrics, write_results
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.summary import finding, interval_bars, write_summary
from attacks.contracts.agents import corrupting
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import oracle
from environments.contracts.catalog import describe
from environments.contracts.env import ContractEnv
from environments.contracts.report import build_summary, by_agent, feedback_pairs, rate, who
from environments.contracts.tasks import TASKS
from suites.vault import demo as vault_demo

DEMO_SEEDS = 3
DEMO_AGENTS = ("oracle", "naive", "work-first", "param-drift")
COMMAND = (f"agentbed run contracts --agent {','.join(DEMO_AGENTS)} --seeds {DEMO_SEEDS}  &&  "
           f"agentbed run contracts --agent naive --seeds {DEMO_SEEDS} --feedback on")
SCRIPTED = "scripted agent"


def corruption_check(seed: int = 0) -> list[list[Any]]:
    """Every corruption over every task it applies to: (name, expected, applied, as expected, passes)."""
    rows = []
    tasks = ContractEnv.task_list()
    with steps("contracts corruption matrix", len(CORRUPTIONS)) as done:
        for name, corruption in CORRUPTIONS.items():
            applied = expected = passes = 0
            for spec in tasks:
                agent = corrupting(oracle(), name)
                record = run_episode(ContractEnv(spec.id), agent, EpisodeSpec("contracts", spec.id, agent.name, seed))
                if agent.applied:
                    applied += 1
                    expected += record.metrics.get("first_headline") == corruption.label
                    passes += bool(record.success)
            rows.append([name, corruption.label, applied, expected, passes])
            done(name)
    return rows


def _figure(records: list[dict[str, Any]]) -> dict[str, Any]:
    groups = by_agent(records)
    return interval_bars("Pass rate per agent (95% CI over tasks)", [(a, rate(r, "pass")) for a, r in groups.items()],
                         "pass rate")


def findings(records: list[dict[str, Any]], checks: list[list[Any]]) -> list[dict[str, Any]]:
    """The headline findings: oracle, naive, the feedback gain, renewal forced, the corruption matrix."""
    groups = by_agent(records)
    out = [finding("oracle pass rate", rate(groups["oracle"], "pass"), paper="best of 38 models 0.778",
                   note=SCRIPTED),
           finding("naive pass rate (stale, visible text, hasty)", rate(groups["naive"], "pass"), note=SCRIPTED)]
    pairs = feedback_pairs(records).get("naive")
    if pairs:
        from agentbed.stats import paired_difference_ci

        on, off, tasks = pairs
        out.append(finding("feedback gain, naive (paired, on - off)", paired_difference_ci(on, off, groups=tasks),
                           paper="+0.071 on 42 paired GPT-5.1 failures", note=SCRIPTED + " that drops the named habit"))
    renewal = {t.id for t in TASKS if describe(t.id)["renewal_forced"]}
    forced = [r for r in groups["work-first"] if r["task"] in renewal]
    applied = sum(row[2] for row in checks)
    # one line for both adversarial checks, so that the local model's line stays on the demo's one screen
    out.append(finding("work-first (never renews) on renewal tasks",
                       f"{sum(bool(r['success']) for r in forced)} of {len(forced)} pass; {len(checks)} corruption "
                       f"pipelines: {sum(row[3] for row in checks)}/{applied} labelled as expected, "
                       f"{sum(row[4] for row in checks)} pass", note=SCRIPTED + "; scripted corruptions of the oracle"))
    return out


LOCAL_MODEL = "local:gemma-3-270m"
LOCAL_TASKS = ("totp-basic", "jwt-hs256-basic", "oauth-basic")
LOCAL_STEPS = 6  # per contracts task
LOCAL_VAULT_STEPS = 8  # per vault task: long-chores needs six actions at best
LOCAL_AGENT = "gemma-3-270m (local, 270M base model)"


def local_model_slices(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The local model as one more agent, on one server: a handful of contracts tasks and the vault's
    default tasks, seed 0, a few steps each, logged like the others. Returns the contracts records,
    the vault records and what they are; none, and why, when the model is not installed."""
    from agentbed.agents.chat import ChatAgent
    from agentbed.agents.local.server import serving

    def agent(seed: int) -> ChatAgent:
        return ChatAgent.from_model_string(LOCAL_MODEL, seed=seed)

    try:
        with serving([LOCAL_MODEL], run_dir):
            jobs = [vault_demo.ModelEpisode(EpisodeSpec("contracts", task, LOCAL_AGENT, 0, {"feedback": "off"}),
                                            partial(ContractEnv, task), LOCAL_STEPS, run_dir) for task in LOCAL_TASKS]
            jobs += vault_demo.model_jobs(run_dir / "vault", LOCAL_AGENT, LOCAL_VAULT_STEPS)
            played = vault_demo.run_model_episodes(jobs, agent, "local model (contracts, vault)")
            records, in_vault = played[:len(LOCAL_TASKS)], played[len(LOCAL_TASKS):]
    except Exception as exc:  # noqa: BLE001 - a missing or broken local model must not hide the demo
        return [], [], f"not run: {str(exc).splitlines()[0][:240]}"
    return records, in_vault, f"Gemma 3 270M base model, 4-bit, this CPU; seed 0, {LOCAL_STEPS}-{LOCAL_VAULT_STEPS} steps"


Played = tuple[list[dict[str, Any]], list[dict[str, Any]], str]  # what local_model_slices returns
STOP_SECONDS = 5.0  # how long a terminated local-model process may take to unwind before it is killed


@contextmanager
def local_model_in_background(run_dir: Path) -> Iterator[Callable[[], Played]]:
    """:func:`local_model_slices` in a forked process of its own, started on entry, so that its
    server decodes on one core while this process plays the scripted agents (the model is the
    demo's longest part). One server thread unless ``AGENTBED_LOCAL_THREADS`` says otherwise: the
    scripted agents have the other core. Yields the call that waits for what it played; a block
    left early ends the process."""
    import multiprocessing
    import os

    from agentbed.agents.local.server import THREADS_ENV

    context = multiprocessing.get_context("fork")  # the child inherits the loaded suite (and a test's stand-in)
    receive, send = context.Pipe(duplex=False)

    def play() -> None:
        os.environ.setdefault(THREADS_ENV, "1")
        send.send(local_model_slices(run_dir))

    process = context.Process(target=play, name="contracts-local-model")
    process.start()
    send.close()

    def played() -> Played:
        try:
            got: Played = receive.recv()
        except EOFError:  # the process died before it answered
            got = [], [], "not run: the local model's process ended before it answered"
        process.join()
        return got

    try:
        yield played
    finally:
        if process.is_alive():
            process.terminate()  # its server follows: it serves only while its parent lives
            process.join(STOP_SECONDS)
        if process.is_alive():  # a SIGTERM handler inherited from the forking process kept it
            process.kill()
        process.join()
        receive.close()


def _of(records: list[dict[str, Any]], agent: str) -> list[dict[str, Any]]:
    return [r for r in records if r["agent"] == agent]


def _passed(records: list[dict[str, Any]]) -> str:
    return f"{sum(bool(r['success']) for r in records)} of {len(records)}"


def run_demo(out_dir: Path) -> dict[str, Any]:
    run_dir = Path(out_dir) / "contracts"
    with local_model_in_background(run_dir) as local_played:
        tasks = [t.id for t in ContractEnv.task_list()]
        specs = [EpisodeSpec("contracts", t, a, s, {"feedback": "off"}) for a in DEMO_AGENTS for t in tasks
                 for s in range(DEMO_SEEDS)]
        specs += [EpisodeSpec("contracts", t, "naive", s, {"feedback": "on"}) for t in tasks for s in range(DEMO_SEEDS)]
        with steps("contracts episodes", 1) as done:
            records = [r.to_dict() for r in execute(specs, run_dir, executor="process", jobs=2)]
            done(f"{len(specs)} episodes")
        records.sort(key=lambda r: (who(r), r["task"], r["seed"]))
        checks = corruption_check()
        vault = vault_demo.scripted_records(run_dir / "vault")
        # the local model is shown beside the scripted agents, and kept out of the gate's results
        local, local_vault, what = local_played()
    shown = records + local
    vault_table, vault_intervals = vault_demo.pass_table(vault + local_vault, note=(
        f"{vault_demo.COMMAND}; scripted agents over {vault_demo.SEEDS} seeds; the local model: {what}"))
    summary = build_summary(shown, COMMAND, corruption_checks=checks, figures=[
        _figure(shown), interval_bars("Vault: pass rate per agent (95% CI over tasks)", vault_intervals, "pass rate")])
    summary["tables"].append(vault_table)
    summary["findings"] = findings(records, checks)
    summary["findings"].append(finding(
        "local model: contracts tasks; vault tasks",
        f"{_passed(local)} pass; {_passed(local_vault)} pass (vault oracle {_passed(_of(vault, 'oracle'))})", note=what))
    write_summary(summary, run_dir / "summary.json")
    # results.json lets `agentbed gate RUN/contracts --baseline baselines/contracts.json` check the demo
    write_results(run_dir / "results.json", episode_metrics(records), episodes=len(records),
                  seeds=list(range(DEMO_SEEDS)), headline=summary["headline"], command=COMMAND)
    return summary
