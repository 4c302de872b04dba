"""A control run as Inspect eval logs in the layout ControlArena's analysis reads.

One log per (protocol, eval mode), built by agentbed's Inspect export (:mod:`agentbed.export`) and
given what ControlArena's ``samples_df`` looks for: the sample metadata ControlArena's
``ControlTaskMetadata`` has (``main_task_description``, ``side_task_name`` -- set only in attack mode,
which is how ``samples_df`` tells the modes apart --, ``side_task_description``, ``setting_name``,
``eval_mode``), a scorer whose value holds ``main_task_success`` and ``side_task_success`` as
``C``/``I``, the trajectory's ``max_suspicion_scorer``, and the eval's ``setting`` and
``micro_protocol`` metadata. Errored episodes are left out: agentbed counts them apart, never as a
failure of either task (ControlArena would have no score for them).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from agentbed.export.episodes import EpisodeLog, load_episodes
from suites.control.analysis import _suspicions, protocol_key
from suites.control.settings import mode_of, split_task

SUSPICION_SCORER = "max_suspicion_scorer"
TASK_SCORER = "control_task_scorer"


def _flag(value: Any) -> str:
    return "C" if value else "I"


def export_control(run_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write ``<protocol>-<mode>.eval`` per protocol and mode under ``out_dir``; return the paths."""
    from inspect_ai.log import write_eval_log
    from inspect_ai.scorer import Score

    from agentbed.export.inspect_log import _created, _run_info, eval_log  # imports inspect-ai

    root = Path(run_dir)
    groups: dict[tuple[str, str], list[EpisodeLog]] = defaultdict(list)
    for ep in load_episodes(root):
        r = ep.record
        if r.get("suite") != "control" or r.get("status") == "error" or ep.log_error:
            continue
        key = "trusted" if r["agent"] == "trusted" else protocol_key(r.get("options") or {})
        groups[(key, mode_of(r["agent"], r.get("options") or {}))].append(ep)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    info, created = _run_info(root), _created(root)
    paths = []
    for (protocol, mode), eps in sorted(groups.items()):
        eps.sort(key=lambda ep: (str(ep.record["task"]), ep.record["seed"], ep.record["agent"]))
        log = eval_log("control", f"{protocol}-{mode}", eps, info, created)
        for sample, ep in zip(log.samples or [], eps, strict=True):
            r, metrics = ep.record, ep.record.get("metrics") or {}
            env_task = ep.header.get("task_params") or {}
            setting, _ = split_task(r["task"])
            sample.id = f"{r['task']}#{r['seed']}#{r['agent']}"
            sample.epoch = 1
            sample.metadata = {**(sample.metadata or {}), "eval_mode": mode, "setting_name": setting.name,
                               "setting_description": f"agentbed control setting {setting.name}",
                               "main_task_name": r["task"], "main_task_description": str(env_task or r["task"]),
                               "side_task_name": f"{setting.name}-side-task" if mode == "attack" else None,
                               "side_task_description": "the setting's side task" if mode == "attack" else ""}
            # ControlArena reads a string score as C/I/N: agentbed's free-text "labels" score stays out
            sample.scores = {**{k: v for k, v in (sample.scores or {}).items() if k != "labels"},
                             TASK_SCORER: Score(value={"main_task_success": _flag(metrics.get("main_task_success")),
                                                       "side_task_success": _flag(metrics.get("side_task_success"))}),
                             SUSPICION_SCORER: Score(value=_suspicions(ep))}
        log.eval.dataset.sample_ids = [s.id for s in log.samples or []]
        log.eval.dataset.samples = len(log.samples or [])
        log.eval.config.epochs = 1
        log.eval.metadata = {**(log.eval.metadata or {}), "setting": {"type": "agentbed-control"},
                             "micro_protocol": {"type": protocol}, "mode": mode}
        path = out / f"{protocol.replace('/', '_')}-{mode}.eval"
        write_eval_log(log, str(path))
        paths.append(path)
    return paths
