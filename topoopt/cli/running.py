"""A solve run for the command line: in a worker thread, so that progress goes to stderr while it
runs and Ctrl-C is answered at once with what is already known."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoopt.cli.common import err

if TYPE_CHECKING:  # the solver is imported when a solve runs, not when the command line starts
    from topoopt.solver.run import Stats

QUIET_S = 2.0
"""A solve shorter than this prints no progress."""
REPORT_EVERY_S = 10.0
"""While the stage does not change, progress is repeated this often."""


class Interrupted(Exception):
    """Ctrl-C during a solve; ``proven``: the result known by then (infeasibility proven, the
    explanation not finished), or None."""

    def __init__(self, proven, stage: str) -> None:
        super().__init__(stage)
        self.proven, self.stage = proven, stage


@dataclass
class ProgressReporter:
    """Lines such as ``topoopt: 12 s · explaining: relaxing budget_cap · 37 CP-SAT solves`` on
    stderr: once the solve has run ``QUIET_S``, at each new stage and every ``REPORT_EVERY_S``."""

    stats: Stats
    last_stage: str = ""
    last_report: float = 0.0

    def tick(self) -> None:
        now = time.perf_counter()
        elapsed = now - self.stats.started
        stage = self.stats.stage
        if elapsed < QUIET_S or (stage == self.last_stage and now - self.last_report < REPORT_EVERY_S):
            return
        self.last_stage, self.last_report = stage, now
        err(f"topoopt: {elapsed:.0f} s · {stage} · {self.stats.solves:,} CP-SAT solves")


def solve_reporting(instance, on_proven=None, **options):
    """``topoopt.solver.solve`` with progress on stderr; raises :class:`Interrupted` on Ctrl-C."""
    from topoopt.solver import solve
    from topoopt.solver.run import Stats

    stats, outcome, proven = Stats(), {}, []

    def proven_now(result) -> None:
        proven.append(result)
        if on_proven is not None:
            on_proven(result)

    def work() -> None:
        try:
            outcome["result"] = solve(instance, stats=stats, on_proven=proven_now, **options)
        except BaseException as exc:  # re-raised in the calling thread
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="topoopt-solve", daemon=True)
    reporter = ProgressReporter(stats)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
            reporter.tick()
    except KeyboardInterrupt:
        raise Interrupted(proven[0] if proven else None, stats.stage) from None
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
