"""Run the real Slurm controller on a topology file and read back the tree it parsed.

``slurmctld -D`` starts inside a private network namespace (``unshare --net``): it listens on
that namespace's loopback only, never on the machine's network. The namespace's loopback gets a
second address because Slurm resolves with ``AI_ADDRCONFIG`` and an IPv4 hint, which glibc
refuses when the only IPv4 address is 127.0.0.1. Authentication is ``auth/none`` (Slurm 22.05,
the Debian 12 package, still ships it; nothing outside the namespace can reach the controller).

:func:`unavailable` says why the controller cannot run here (``None`` when it can); tests skip
with that message, or fail under ``TOPOOPT_REQUIRE_CONSUMERS`` (:mod:`consumers`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from consumers import require

TOOLS = ("slurmctld", "scontrol", "unshare", "ip")
START_TIMEOUT_S = 120

# The controller's whole configuration: one partition of the design's nodes, every node on the
# namespace's loopback; nothing is ever scheduled.
SLURM_CONF = """\
ClusterName=topoopt
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
MailProg=/bin/true
StateSaveLocation={state}
SlurmctldPidFile={dir}/slurmctld.pid
SlurmctldLogFile={dir}/slurmctld.log
TopologyPlugin=topology/tree
"""

# Runs inside the namespace: loopback up, controller in the background, wait for it (or its
# death), print the topology, stop it.
SCRIPT = """\
set -u
ip link set lo up && ip addr add 10.255.0.1/32 dev lo || exit 90
slurmctld -D -f "$SLURM_CONF" >"$DIR/slurmctld.out" 2>&1 &
pid=$!
i=0
until scontrol ping >/dev/null 2>&1; do
  kill -0 $pid 2>/dev/null || exit 91
  i=$((i + 1)); [ $i -gt {tries} ] && exit 92
  sleep 0.5
done
scontrol show topology; rc=$?
kill $pid; wait $pid
exit $rc
"""


def unavailable() -> str | None:
    """Why the real Slurm controller cannot run here, or ``None``."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"Slurm test needs {', '.join(missing)} (apt-get install slurm-wlm iproute2)"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --net is not permitted here (needs root): {probe.stderr.strip()}"
    return None


def require_slurm() -> None:
    """Skip (or fail under ``TOPOOPT_REQUIRE_CONSUMERS``) when the controller cannot run."""
    require(unavailable())


def slurm_version() -> str:
    run = subprocess.run(["scontrol", "--version"], capture_output=True, text=True, check=True)
    return run.stdout.strip()


def show_topology(topology_conf: str, nodes: list[str], work: Path) -> str:
    """Start slurmctld on ``topology_conf`` with ``nodes`` and return ``scontrol show topology``.

    Fails the test with the controller's log when it rejects the file or does not start.
    """
    state = work / "state"
    state.mkdir(parents=True, exist_ok=True)
    conf = work / "slurm.conf"
    lines = [SLURM_CONF.format(state=state, dir=work)]
    lines += [f"NodeName={name} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n" for name in nodes]
    lines.append("PartitionName=all Nodes=ALL Default=YES\n")
    conf.write_text("".join(lines), encoding="utf-8")
    (work / "topology.conf").write_text(topology_conf, encoding="utf-8")
    script = SCRIPT.format(tries=2 * START_TIMEOUT_S)
    env = {**os.environ, "SLURM_CONF": str(conf), "DIR": str(work)}
    run = subprocess.run(["unshare", "--net", "sh", "-c", script], capture_output=True, text=True, env=env,
                         timeout=START_TIMEOUT_S + 60)
    if run.returncode != 0:
        log = (work / "slurmctld.out").read_text(errors="replace") if (work / "slurmctld.out").exists() else ""
        pytest.fail(f"slurmctld (exit {run.returncode}) did not serve the topology:\n{run.stderr}\n{log[-3000:]}")
    return run.stdout


def expand_hostnames(expression: str, work: Path) -> list[str]:
    """Slurm's own expansion of a hostlist (``scontrol show hostnames``, with the configuration
    :func:`show_topology` wrote in ``work``; no controller needed)."""
    env = {**os.environ, "SLURM_CONF": str(work / "slurm.conf")}
    run = subprocess.run(["scontrol", "show", "hostnames", expression], capture_output=True, text=True, env=env,
                         check=True)
    return run.stdout.split()


def parse_topology(text: str) -> dict[str, dict[str, str]]:
    """``{switch: {"Level": …, "Nodes": …, "Switches": …}}`` from ``scontrol show topology``."""
    switches = {}
    for line in text.splitlines():
        fields = dict(token.split("=", 1) for token in line.split() if "=" in token)
        if "SwitchName" in fields:
            switches[fields.pop("SwitchName")] = fields
    return switches
