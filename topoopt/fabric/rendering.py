"""Run Graphviz's ``dot`` on a DOT file, with a timeout, never failing the caller.

The binary is ``$TOPOOPT_DOT`` when set (a name on PATH or a path), else ``dot``. When it is
missing, fails or runs past the timeout, the DOT file stays and a warning is returned.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def find_dot() -> str | None:
    """Path of the Graphviz binary to run, or None."""
    for candidate in (os.environ.get("TOPOOPT_DOT"), "dot"):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
    return None


def render_dot(dot_path: Path, fmt: str = "svg", *, timeout_s: float = 60.0) -> tuple[Path | None, str | None]:
    """Render ``dot_path`` next to itself as ``fmt``: ``(output or None, warning or None)``."""
    output = dot_path.with_suffix(f".{fmt}")
    output.unlink(missing_ok=True)  # a drawing left from an earlier run would no longer match the DOT
    exe = find_dot()
    if exe is None:
        return None, (f"graphviz 'dot' not found: wrote {dot_path.name} only "
                      "(apt-get install graphviz, or set TOPOOPT_DOT)")
    try:
        done = subprocess.run([exe, "-Kdot", f"-T{fmt}", "-o", str(output), str(dot_path)],
                              capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return None, f"{exe} took over {timeout_s:g} s to draw {fmt}: kept {dot_path.name}"
    except OSError as exc:
        return None, f"could not run {exe}: {exc}; kept {dot_path.name}"
    if done.returncode != 0:
        message = " ".join(done.stderr.decode(errors="replace").strip().splitlines()[:2])
        return None, f"{exe} failed to draw {fmt} (exit {done.returncode}): {message}"
    return output, None
