"""Timing and memory measurement: wall clock by ``time.perf_counter``; peak memory as the peak
resident set size (RSS) of a child process.

Why RSS of a child rather than ``tracemalloc``: CP-SAT (C++) and Graphviz (a ``dot``
subprocess) allocate where ``tracemalloc`` cannot see, and tracing slows Python code down several
times, which would spoil the timings. The kernel's high-water mark counts everything.

Which high-water mark: a command's ``ru_maxrss`` as ``os.wait4`` (or ``RUSAGE_CHILDREN``) reports
it for a direct child also holds the *parent's* peak, because Linux folds the old address space's
peak into ``ru_maxrss`` at ``exec`` and Python starts children with ``vfork``. So commands run under
``/usr/bin/time -f %M``, whose own small child is the command (when ``time`` is missing,
``os.wait4``'s figure is used and marked as an upper bound). A spawned Python child reads its own
``VmHWM`` from ``/proc/self/status``, the peak of its fresh address space.
"""

from __future__ import annotations

import cProfile
import multiprocessing
import os
import pstats
import queue
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

KIB_PER_MB = 1024


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def timed(call: Callable[[], object]) -> tuple[float, object]:
    """``(seconds, result)`` of one call."""
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


@dataclass
class Series:
    wall_s: list[float]
    cpu_s: list[float]
    """Process CPU time (all threads): steadier than wall time on a shared machine."""
    result: object


def repeat(call: Callable[[], object], repeats: int, once_above_s: float | None = None) -> Series:
    """Wall and CPU seconds of ``repeats`` calls (and the last result); a call slower than
    ``once_above_s`` ends the series, so slow cases are measured once rather than not at all."""
    series = Series(wall_s=[], cpu_s=[], result=None)
    for _ in range(repeats):
        cpu_started = time.process_time()
        seconds, series.result = timed(call)
        series.cpu_s.append(time.process_time() - cpu_started)
        series.wall_s.append(seconds)
        if once_above_s is not None and seconds > once_above_s:
            break
    return series


# Where a solve spends its time, by the cumulative time of a few functions under cProfile.
PROFILE_PARTS = {
    "cp_sat_s": lambda file, func: "cp_model_helper.solve" in func,
    "model_build_s": lambda file, func: file.endswith("solver/model/__init__.py") and func == "new_model",
    "perf_s": lambda file, func: file.endswith("perf/evaluate.py") and func in {
        "min_nodes_for_time", "min_nodes_to_fit", "time_to_train_s", "evaluate", "fits_in_memory"},
    "options_s": lambda file, func: file.endswith("options/tables.py") and func in ("__init__", "_prefiltered"),
}


def profile_split(call: Callable[[], object]) -> dict[str, float]:
    """Seconds of one call under cProfile: total, in CP-SAT's ``solve``, building the model, in the
    performance model (anywhere) and building the option tables. Profiling slows the Python
    parts, so the split overstates them a little."""
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    call()
    profiler.disable()
    split = {"total_s": time.perf_counter() - started}
    stats = pstats.Stats(profiler).stats  # {(file, line, function): (calls, primitive, own, cumulative, callers)}
    for part, matches in PROFILE_PARTS.items():
        split[part] = sum(entry[3] for (file, _, func), entry in stats.items() if matches(file, func))
    return {part: round(seconds, 2) for part, seconds in split.items()}


def describe_split(split: dict[str, float]) -> str:
    return (f"{split['total_s']:g} s profiled: CP-SAT {split['cp_sat_s']:g} s, "
            f"model build {split['model_build_s']:g} s, "
            f"option tables {split['options_s']:g} s; performance model {split['perf_s']:g} s (inside the others)")


# == A Python function in a child process, with a time cap ===========================================
@dataclass
class ChildRun:
    samples: list[dict]
    """What the child's generator yielded, in order."""
    timed_out: bool
    peak_rss_mb: float | None
    """The child's peak RSS (None when it was stopped)."""
    error: str | None = None


def own_peak_rss_mb() -> float | None:
    """This process's peak RSS since its last ``exec`` (``VmHWM``); None where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / KIB_PER_MB
    except OSError:
        pass
    return None


def _child_main(generator: Callable[..., Iterator[dict]], args: tuple, out: multiprocessing.Queue) -> None:
    out.put(("ready", None))
    try:
        for sample in generator(*args):
            out.put(("sample", sample))
    except Exception as error:  # noqa: BLE001 - reported to the parent, which records it
        out.put(("error", f"{type(error).__name__}: {error}"))
    out.put(("done", own_peak_rss_mb()))


def in_child(generator: Callable[..., Iterator[dict]], args: tuple, cap_s: float) -> ChildRun:
    """Run ``generator(*args)`` in a fresh (spawned) Python process and collect what it yields.

    The child is stopped when it yields nothing for ``cap_s`` seconds, counted from the moment it
    is ready to work (the interpreter's start-up is not counted). A fresh process also means
    cold caches, as a user's first solve has.
    """
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=_child_main, args=(generator, args, out), daemon=True)
    child.start()
    run = ChildRun(samples=[], timed_out=False, peak_rss_mb=None)
    wait_s = 60.0  # for the interpreter to start and unpickle the work
    while True:
        try:
            kind, value = out.get(timeout=wait_s)
        except queue.Empty:
            run.timed_out = True
            child.terminate()
            break
        wait_s = cap_s
        if kind == "sample":
            run.samples.append(value)
        elif kind == "error":
            run.error = value
        elif kind == "done":
            run.peak_rss_mb = value
            break
    child.join(timeout=10)
    return run


# == A command in a child process ====================================================================
TIME = shutil.which("time", path="/usr/bin:/bin")


@dataclass
class CommandRun:
    wall_s: float
    peak_rss_mb: float
    rss_exact: bool
    """False when ``/usr/bin/time`` is missing and the figure may include this process's own peak."""
    returncode: int
    stderr_tail: str


def run_command(argv: list[str], cwd: str | None = None) -> CommandRun:
    """Wall time and peak RSS of one command (its own children included), stdout discarded."""
    wrapped = [TIME, "-f", "%M", *argv] if TIME else argv
    started = time.perf_counter()
    process = subprocess.Popen(wrapped, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Read stderr before waiting so a chatty command cannot block on a full pipe.
    stderr = (process.stderr.read() if process.stderr else b"").decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    wall_s = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = usage.ru_maxrss
    lines = stderr.rstrip("\n").split("\n")
    if TIME and lines[-1].strip().isdigit():
        # time prints the peak (KiB) as the last line of stderr, after the command's own output.
        peak_kib = int(lines.pop().strip())
    stderr = "\n".join(lines)
    return CommandRun(wall_s=wall_s, peak_rss_mb=peak_kib / KIB_PER_MB, rss_exact=bool(TIME),
                      returncode=process.returncode, stderr_tail=stderr[-400:])
