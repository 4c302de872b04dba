import json

from package_files import write_package

from agentbed.cli import main


def test_plan_verb_reports_every_strategy(synth_repo, capsys):
    assert main(["cocoder-plan", str(synth_repo.package_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["modules"] == 21 and set(report["strategies"]) == {"sequential", "file-parallel", "per-file",
                                                                      "cocoder", "file-parallel-uncapped"}
    assert report["cycles"]
    assert all(0.0 <= r["residual_risk"] < 1.0 for r in report["strategies"].values())
    cocoder = report["strategies"]["cocoder"]
    assert set(cocoder["hub_pieces"]) | set(cocoder["late_pieces"]) <= {n for g in cocoder["groups"] for n in g}
    # writing everything against interfaces is the riskiest way (the planner's bound is sequential's)
    assert report["strategies"]["file-parallel"]["residual_risk"] > report["strategies"]["sequential"]["residual_risk"]


def test_cycle_only_package_is_planned_as_one_unit_with_a_message(tmp_path, capsys):
    pkg = write_package(tmp_path, {
        "ring/__init__.py": "",
        "ring/a.py": "import ring.b\n\ndef f():\n    return ring.b.g()\n",
        "ring/b.py": "import ring.a\n\ndef g():\n    return 1\n",
    })
    assert main(["cocoder-plan", str(pkg), "--granularity", "file"]) == 0
    assert "import cycle of 2 modules (written by one agent): ring.a, ring.b" in capsys.readouterr().out
    assert main(["cocoder-plan", str(pkg)]) == 0  # the cycle is the whole work: the planner may split it
    assert "import cycle of 2 modules (" in capsys.readouterr().out


def test_bad_packages_exit_2_with_one_line(tmp_path, capsys):
    bad = write_package(tmp_path, {"bad/__init__.py": "def f(:\n"})
    empty = tmp_path / "empty"
    empty.mkdir()
    for target, words in [(bad, "syntax error"), (empty, "no Python package"), (tmp_path / "missing", "neither a file")]:
        assert main(["cocoder-plan", str(target)]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_risk_is_a_level_or_a_probability(synth_repo, capsys):
    assert main(["cocoder-plan", str(synth_repo.package_dir), "--strategy", "cocoder", "--risk", "0.05",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["strategies"]["cocoder"]["residual_risk"] <= 0.05
    for level in ("sequential+0", "sequential+0.02"):  # one sequential agent's risk plus a margin
        assert main(["cocoder-plan", str(synth_repo.package_dir), "--strategy", "cocoder", "--risk", level]) == 0
    capsys.readouterr()
    for bad in ("2", "-0.1", "nan", "low", "sequential+", "sequential+2", "sequential+low", "sequential-0.1"):
        try:
            main(["cocoder-plan", str(synth_repo.package_dir), "--risk", bad])
        except SystemExit as exc:  # argparse: one line naming the option, status 2
            assert exc.code == 2
        err = capsys.readouterr().err
        assert "--risk" in err and "Traceback" not in err


def test_plan_of_a_task_is_the_plan_its_run_uses(sandbox, tmp_path, capsys):
    """cocoder-plan on a task (or a repository) prepares it as the run does, blanking included."""
    from suites.cocoder.team import TeamConfig, run_team

    assert main(["cocoder-plan", "synth-12", "--strategy", "cocoder", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    planned = report["strategies"]["cocoder"]
    manifest = run_team("synth-12", TeamConfig(strategy="cocoder"), 0, tmp_path).manifest
    assert report["task"] == "synth-12" and report["blanked_functions"] > 0
    assert planned["groups"] == manifest["groups"] and planned["plan"] == manifest["plan"]
    assert planned["makespan"] == round(manifest["metrics"]["planned_makespan"], 1)


def test_plan_of_a_module_subset_is_the_plan_its_run_uses(sandbox, tmp_path, capsys):
    """``TASK@modules=a`` as PATH and ``--modules a`` preview the plan ``run cocoder --modules a`` runs."""
    from environments.cocoder.tasks import load_task
    from suites.cocoder.team import TeamConfig, run_team

    module = sorted(m for m, mt in load_task("synth-12").modules.items() if mt.blanked)[0]
    assert main(["cocoder-plan", "synth-12", "--modules", module, "--strategy", "cocoder", "--json"]) == 0
    by_option = json.loads(capsys.readouterr().out)
    assert main(["cocoder-plan", f"synth-12@modules={module}", "--strategy", "cocoder", "--json"]) == 0
    by_id = json.loads(capsys.readouterr().out)
    manifest = run_team(f"synth-12@modules={module}", TeamConfig(strategy="cocoder"), 0, tmp_path).manifest
    assert by_option == by_id and by_id["task"] == f"synth-12@modules={module}" and by_id["modules"] == 1
    assert by_id["strategies"]["cocoder"]["makespan"] == round(manifest["metrics"]["planned_makespan"], 1)
    assert main(["cocoder-plan", "synth-12", "--modules", "synthpkg.nope"]) == 2
    assert "synthpkg.nope" in capsys.readouterr().err


def test_every_makespan_and_cost_says_it_comes_from_the_cost_model(sandbox, tmp_path, capsys):
    """cocoder-plan's text and JSON, a team manifest, and ``run cocoder``'s console (each strategy's
    speedup over sequential and its cost) name the cost model beside the figures."""
    from suites.cocoder.team import TeamConfig, run_team

    assert main(["cocoder-plan", str(tmp_path / "nope")]) == 2
    capsys.readouterr()
    assert main(["cocoder-plan", "synth-12", "--strategy", "sequential", "--strategy", "cocoder"]) == 0
    text = capsys.readouterr().out
    rows = [ln for ln in text.splitlines() if "makespan" in ln and "cost $" in ln]
    assert len(rows) == 2 and all("s (cost model;" in r and "(cost model)," in r for r in rows)
    assert main(["cocoder-plan", "synth-12", "--strategy", "cocoder", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["strategies"]["cocoder"]["figures_from"] == "cost model" and "cost model" in report["cost_model"]
    manifest = run_team("synth-12", TeamConfig(strategy="per-file"), 0, tmp_path / "team").manifest
    assert manifest["cost_model"].startswith("Makespan and cost come from the cost model")
    assert main(["run", "cocoder", "--task", "synth-12", "--strategy", "per-file", "--seeds", "1",
                 "--out", str(tmp_path / "run")]) == 0
    console = capsys.readouterr().out
    assert "speedup_vs_sequential (cost model)" in console and "cost_usd (cost model)" in console
    speedup = [ln for ln in console.splitlines() if "speedup_vs_sequential" in ln][0]
    assert "per-file" in speedup and "sequential plan" in speedup
