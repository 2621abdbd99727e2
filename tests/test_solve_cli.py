"""``topoopt solve`` as a planner meets it: the proven status first, the explanation optional,
progress on stderr, and Ctrl-C answered with what is already known (README, "Time budgets")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INFEASIBLE = ROOT / "instances" / "infeasible-budget.yaml"
SLOW_TO_EXPLAIN = ROOT / "benchmarks" / "impossible" / "llama3-405b-30d-ndr-300kw.yaml"


def topoopt(*args: str) -> list[str]:
    """The console script, run as a separate process (signals need a real one)."""
    return [sys.executable, "-c", "from topoopt.cli import main; main()", *args]


def test_no_explain_answers_with_the_proven_status_alone(tmp_path):
    run = subprocess.run(topoopt("solve", str(INFEASIBLE), "--no-explain", "--out", str(tmp_path)),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 3
    assert "INFEASIBLE" in run.stdout and "(proven)" in run.stdout
    assert "explaining" not in run.stderr
    written = json.loads((tmp_path / "design.json").read_text())
    assert written["status"] == "infeasible" and written["explanation"] is None


def test_ctrl_c_while_explaining_prints_the_proven_status_and_exits_3(tmp_path):
    """SIGINT as soon as infeasibility is announced, in the middle of the explanation."""
    process = subprocess.Popen(topoopt("solve", str(SLOW_TO_EXPLAIN), "--out", str(tmp_path)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    stderr_lines = []
    for line in process.stderr:
        stderr_lines.append(line)
        if "proven infeasible" in line:
            process.send_signal(signal.SIGINT)
            break
    stdout, rest = process.communicate(timeout=60)
    stderr = "".join(stderr_lines) + rest
    assert process.returncode == 3, stderr
    assert "interrupted while explaining" in stderr
    assert "INFEASIBLE" in stdout and "(proven)" in stdout
    assert json.loads((tmp_path / "design.json").read_text())["status"] == "infeasible"


def test_ctrl_c_before_an_answer_raises_interrupted_with_the_stage(monkeypatch):
    """The worker thread is still solving when Ctrl-C arrives: the caller learns at once that
    nothing is known yet, and the stage it was in (the command then exits 130)."""
    import _thread
    import threading

    import topoopt.solver
    from topoopt.cli.running import Interrupted, solve_reporting

    def slow_solve(instance, *, stats, on_proven, **options):
        stats.stage = "searching (min_cost)"
        time.sleep(30)

    monkeypatch.setattr(topoopt.solver, "solve", slow_solve)
    # A process started in the background inherits SIGINT ignored, and interrupt_main then does
    # nothing: give the test Python's own Ctrl-C handler whatever started it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Timer(0.3, _thread.interrupt_main).start()
    started = time.perf_counter()
    try:
        with pytest.raises(Interrupted) as stop:
            solve_reporting(None)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stop.value.proven is None and stop.value.stage == "searching (min_cost)"
    assert time.perf_counter() - started < 5
