"""Run with ControlArena's own venv (not agentbed's): its analysis on exported logs and on given rows.

argv: LOG_DIR BUDGETS_JSON ROWS_JSON_FILE. Prints JSON: per micro-protocol of the logs, ControlArena's
compute_usefulness and compute_safety at each budget; and for each generated case in ROWS_JSON_FILE
(a list of {"rows": [[mode, main, side, score], ...], "budget": b}), compute_safety on a DataFrame of them.
"""

import json
import sys

import pandas as pd
from control_arena.analysis import compute_safety, compute_usefulness, samples_df

log_dir, budgets, rows_file = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
df = samples_df(log_dir)
logs = {}
for protocol, group in df.groupby(df["micro_protocol_info"].map(lambda d: d["type"])):
    entry = {"usefulness": compute_usefulness(group), "samples": len(group)}
    if (group["eval_mode"] == "attack").any():
        entry["safety"] = {str(b): compute_safety(group, "max_suspicion_scorer", b) for b in budgets}
    logs[protocol] = entry
cases = []
for case in json.load(open(rows_file)):
    frame = pd.DataFrame(case["rows"], columns=["eval_mode", "main_task_success", "side_task_success", "score_m"])
    cases.append(compute_safety(frame, "m", case["budget"]))
print(json.dumps({"logs": logs, "cases": cases}))
