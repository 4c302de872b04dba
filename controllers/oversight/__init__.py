"""Prefix-branching counterfactual oversight (paper 2, "Calibration Is Not Control").

At checkpoints along a base agent's trajectory every candidate oversight action (continue,
each intervention, quit) is executed from the identical state; the realized utilities train
and score controllers. Modules: ``utility`` (utility and regret), ``fork`` (reconstructing a
prefix), ``benchmarks`` (what can be branched), ``dataset`` (building and storing branched
rows), ``features`` (prefix-only features), ``policies`` (controllers), ``evaluate``
(grouped cross-validation, regret, calibration), ``report`` (tables and figures).
"""
