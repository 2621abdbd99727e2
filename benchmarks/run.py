"""``make bench``: how fast and how far topoopt scales.

Writes ``benchmarks/results/latest.md`` and ``benchmarks/results/latest.json`` with six sections
(``benchmarks/sections.py``), each stating its target and PASS/MISS with the ratio measured ÷ limit:

1. **scale** — median solve time (``solve(..., explain=False)`` and the default ``solve``) and the
   CP-SAT model's size for one 70B job at 8 … 131,072 GPUs, full built-in catalog;
2. **examples** — median ``solve()`` time of every bundled example instance (full built-in catalog);
3. **catalog** — solve time as the catalog grows 1× … 10× with vendor variants;
4. **enumeration** — CP-SAT vs exhaustive enumeration (``tests/enumeration.py``: ``topoopt.perf``
   and the checker only) on growing small instances, and whether the optima agree;
5. **end_to_end** — ``topoopt solve --out DIR`` as a subprocess: wall time and peak memory;
6. **startup** — ``topoopt --help`` and ``import topoopt`` wall time; ``import topoopt`` must not
   import ortools.

Measurement (``measure.py``): wall time by ``time.perf_counter`` (and process CPU time where the
solver runs in this process); memory as the peak resident set size (RSS) of a child process —
``/usr/bin/time -f %M`` around a command, ``VmHWM`` inside a spawned Python child. Peak RSS of a
child rather than ``tracemalloc``, because CP-SAT (C++) and Graphviz (a ``dot`` subprocess)
allocate where ``tracemalloc`` cannot see, and tracing would slow the Python parts down and spoil
the timings.

Timings depend on the machine and on what else runs on it; the report records the load average
before and after every section.

Usage::

    python benchmarks/run.py                 # every section (about 10–15 minutes on 2 cores)
    python benchmarks/run.py --quick         # fewer repeats and lower caps (a few minutes)
    python benchmarks/run.py --only catalog  # one section (repeatable); the others are kept from
                                             # the previous latest.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# The benchmark modules sit next to this file; the enumerator and the tiny catalog live in tests/.
for path in (HERE, REPO / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from sections import SECTIONS  # noqa: E402

RESULTS = HERE / "results"


def git_commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
        return commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict:
    from ortools import __version__ as ortools_version

    import topoopt

    return {
        "python": platform.python_version(),
        "ortools": ortools_version,
        "topoopt": topoopt.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "commit": git_commit(),
    }


def run_sections(names: list[str], quick: bool) -> dict:
    results = {}
    for name in names:
        print(f"== {name}", file=sys.stderr, flush=True)
        load_before, commit = os.getloadavg()[0], git_commit()
        started = time.perf_counter()
        section = SECTIONS[name](quick)
        section.update(
            name=name, quick=quick, commit=commit, seconds=round(time.perf_counter() - started, 1),
            measured_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            load_average_before=round(load_before, 2), load_average_after=round(os.getloadavg()[0], 2),
        )
        print(f"   {section['verdict']} ×{section['ratio']}: {section['headline']} ({section['seconds']} s)",
              file=sys.stderr, flush=True)
        results[name] = section
    return results


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value).replace("|", "\\|").replace("\n", " ")


def summary_table(sections: dict) -> str:
    """One line per section: target, measured, ratio, verdict."""
    lines = ["| section | target | measured | ratio | verdict |", "|---|---|---|---|---|"]
    for name in SECTIONS:
        s = sections.get(name)
        if s is None:
            continue
        ratio = "—" if s["ratio"] is None else f"{s['ratio']:g}"
        if s.get("ratio_note"):
            ratio += f" ({s['ratio_note']})"
        lines.append(f"| {name} | {_cell(s['target'])} | {_cell(s['headline'])} | {ratio} | **{s['verdict']}** |")
    return "\n".join(lines)


def markdown(report: dict) -> str:
    meta, sections = report["machine"], report["sections"]
    out = [
        "# topoopt benchmarks",
        "",
        f"`python benchmarks/run.py` (`make bench`). topoopt {meta['topoopt']}, commit {meta['commit']} at the "
        "start of the last run (each section states its own); "
        f"Python {meta['python']}, OR-Tools {meta['ortools']}; {meta['cpus']} CPUs ({meta['platform']}).",
        "Ratio = measured ÷ limit (below 1 meets the target) unless noted.",
        "",
        summary_table(sections),
    ]
    for name in SECTIONS:
        s = sections.get(name)
        if s is None:
            continue
        mode = "quick" if s["quick"] else "full"
        out += [
            "",
            f"## {name}: {s['title']}",
            "",
            f"Target: {s['target']}. **{s['verdict']}** (ratio {s['ratio']}). Measured {s['measured_at']} "
            f"at commit {s.get('commit', 'unknown')} ({mode} run, {s['seconds']} s; load average "
            f"{s['load_average_before']} before, {s['load_average_after']} after).",
            "",
            "| " + " | ".join(s["columns"]) + " |",
            "|" + "---|" * len(s["columns"]),
        ]
        out += ["| " + " | ".join(_cell(row.get(column)) for column in s["columns"]) + " |" for row in s["rows"]]
        out += [""] + [f"* {note}" for note in s["notes"]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and lower time caps")
    parser.add_argument("--only", action="append", choices=list(SECTIONS), metavar="SECTION",
                        help=f"run only this section (repeatable): {', '.join(SECTIONS)}")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a section misses its target")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default benchmarks/results)")
    args = parser.parse_args(argv)
    names = args.only or list(SECTIONS)
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / "latest.json"
    previous = json.loads(json_path.read_text(encoding="utf-8")) if args.only and json_path.exists() else {}
    measured_on = machine()
    sections = {**previous.get("sections", {}), **run_sections(names, args.quick)}
    report = {"machine": measured_on, "sections": {name: sections[name] for name in SECTIONS if name in sections}}
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    text = markdown(report)
    (args.out / "latest.md").write_text(text, encoding="utf-8")
    print(summary_table(report["sections"]))
    print(f"\nwrote {args.out / 'latest.md'} and {json_path.name}", file=sys.stderr)
    missed = [name for name, s in report["sections"].items() if s["verdict"] != "PASS"]
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
