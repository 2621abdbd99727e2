"""Exit codes and output helpers shared by every command."""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_NO_SOLUTION = 4
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit codes: 0 solved/valid, 1 internal error, 2 usage error or invalid instance, "
    "3 proven infeasible (or design violations for 'check' and 'render'), 4 no solution within the limits, "
    "130 interrupted (Ctrl-C or SIGTERM) before an answer."
)


def err(message: str) -> None:
    """Print to stderr (progress, warnings, errors); stdout is for results only."""
    print(message, file=sys.stderr)


LABEL_WIDTH = 13
"""Width of the label column of the summaries ("Design       …"): continuation lines indent to it."""


def on_terminal() -> bool:
    """Whether stdout is a terminal (a person reading), not a pipe or a file."""
    return sys.stdout.isatty()


def fit_to_terminal(text: str, *, width: int | None = None, clip: bool = False) -> str:
    """``text`` with each line longer than the terminal wrapped at spaces, continuations indented
    to the label column (``clip``: cut, ending in ``…``, for a table whose last column is the
    long one). Only on a terminal (its width, or ``COLUMNS``): piped output keeps its lines whole
    for tools that read them.

    >>> print(fit_to_terminal("Design       8 × hgx-h100 = 64 × h100-sxm · ib-ndr", width=36))
    Design       8 × hgx-h100 = 64 ×
                 h100-sxm · ib-ndr
    """
    import shutil
    import textwrap

    if width is None:
        if not on_terminal():
            return text
        width = shutil.get_terminal_size().columns
    width = max(width, 2 * LABEL_WIDTH)
    lines = []
    for line in text.splitlines():
        if len(line) <= width:
            lines.append(line)
            continue
        if clip:
            lines.append(line[: width - 1] + "…")
            continue
        indent = " " * min(LABEL_WIDTH, len(line) - len(line.lstrip(" ")) or LABEL_WIDTH)
        lines.extend(textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                                   break_on_hyphens=False, replace_whitespace=False, drop_whitespace=True))
    return "\n".join(lines)


def load_or_exit(file: str, *, summary: bool = False):
    """Load and validate an instance file; on bad input print every located message and exit 2.

    ``summary`` adds a closing line with the number of problems (``topoopt validate``).
    """
    import typer

    from topoopt.loader import InputError, load_instance

    try:
        return load_instance(file)
    except InputError as exc:
        for message in exc.messages:
            err(message)
        if summary:
            shown = [m for m in exc.messages if "stopped after" not in m]
            more = len(shown) < len(exc.messages)
            err(f"{'more than ' if more else ''}{len(shown)} problem(s) found; the instance is not valid")
        raise typer.Exit(EXIT_INPUT) from None


class NotWritten(Exception):
    """The output set was not written; the message says why (the output directory is unchanged)."""


def check_out_dir(out: str) -> None:
    """Exit 2 at once when ``--out`` names something that cannot hold an output set (a file, a
    link, a directory of other files), before any work is done."""
    import typer

    from topoopt.fabric.output_set import OutputError, check_target, target_path

    try:
        check_target(target_path(out))
    except OutputError as exc:
        err(f"--out: {exc}")
        raise typer.Exit(EXIT_INPUT) from None


def publish(result, instance, out: str, *, source: str, design_json: bool, png: bool = False):
    """Publish ``result``'s output set into ``out`` (atomically, see
    :mod:`topoopt.fabric.output_set`), print the fabric's warnings (``warning: …``) to stderr and
    return the outputs; raise :class:`NotWritten` with the reason (prefixed by ``source``, the
    file the design came from, when the catalog cannot build it)."""
    from topoopt.catalog import CatalogError
    from topoopt.fabric import FabricError, OutputError, publish_outputs

    try:
        outputs = publish_outputs(result, instance, out, design_json=design_json, png=png)
    except (CatalogError, FabricError) as exc:
        raise NotWritten(f"{source}: {exc}") from None
    except OutputError as exc:
        raise NotWritten(f"--out: {exc}") from None
    except OSError as exc:
        raise NotWritten(f"{out}: cannot write the output set: {exc.strerror or exc}; the directory is unchanged") from None
    for warning in outputs.warnings:
        err(f"warning: {warning}")
    return outputs


def write_fabric_files(result, instance, out: str, *, source: str, png: bool = False):
    """:func:`publish` the installation files of ``result``'s design; exit 2 with the reason when
    they cannot be written."""
    import typer

    try:
        return publish(result, instance, out, source=source, design_json=False, png=png)
    except NotWritten as exc:
        err(str(exc))
        raise typer.Exit(EXIT_INPUT) from None
