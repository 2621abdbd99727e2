"""One complete output set per directory, published atomically: :func:`write_output_set`.

The rule: a reader of ``DIR`` sees either the complete previous set or the complete new one,
never a mix of two runs, a truncated file or a stale file from an earlier run. How:

1. Every file is written into a private temporary directory *beside* ``DIR`` (same file system,
   so the final step is a rename), then ``manifest.json`` is written last into it, listing every
   file with its size and SHA-256; each file is flushed to disk before the manifest names it.
2. Under a lock on the parent directory (two topoopt processes publishing into the same place
   take turns; the last to finish wins, each with its complete set), ``DIR`` is checked again
   and the temporary directory takes its place: one ``renameat2(RENAME_EXCHANGE)`` on Linux,
   which swaps both names at once; elsewhere two renames with SIGINT/SIGTERM deferred.
3. The previous set, now under the temporary name, is removed.

Nothing is ever written through a symbolic link: the files are created in a directory this
process made, and ``DIR`` itself must not be a link. ``DIR`` may be missing, empty, or an
earlier output set (it has a ``manifest.json`` that lists everything in it); a directory holding
anything else is refused (:class:`OutputError`), so a mistyped ``--out`` never deletes a
user's files. On any failure or interruption the temporary directory is removed and ``DIR`` is
left as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

MANIFEST = "manifest.json"
"""The file written last into every output set; its presence marks a directory as one."""

MANIFEST_FORMAT = "topoopt-output-set"
MANIFEST_VERSION = 1

_TEMP_SUFFIX = ".topoopt-tmp"
_RENAME_EXCHANGE = 2  # linux/fs.h: atomically exchange two existing paths
_AT_FDCWD = -100

T = TypeVar("T")


class OutputError(Exception):
    """An output directory that cannot be used (a file, a link, foreign files, unwritable)."""


def write_output_set(out_dir: str | Path, fill: Callable[[Path], T]) -> T:
    """Call ``fill(staging)`` to write every file of a set, then publish it as ``out_dir``.

    ``fill`` writes into the directory it is given (empty, private to this call) and returns
    anything; that value is returned. Raises :class:`OutputError` when ``out_dir`` cannot
    hold an output set (checked before ``fill`` runs and again under the lock); whatever
    ``fill`` raises propagates after the temporary directory is removed.
    """
    target = target_path(out_dir)
    check_target(target)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=_TEMP_SUFFIX, dir=parent))
    except OSError as exc:
        raise OutputError(f"{target}: cannot create a directory beside it: {exc.strerror or exc}") from None
    _UNFINISHED.add(staging)
    try:
        _make_public(staging)
        value = fill(staging)
        write_manifest(staging)
    except BaseException:
        with _signals_deferred():
            _discard(staging)
        raise
    # One uninterrupted step: swap under the lock, then remove what the swap left behind.
    with _signals_deferred():
        try:
            with _parent_locked(parent):
                check_target(target)
                _swap_into_place(staging, target)
        finally:
            _discard(staging)  # after a swap: the previous set
    return value


def _discard(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
    _UNFINISHED.discard(staging)


def check_target(target: Path) -> None:
    """Raise :class:`OutputError` unless ``target`` is missing, empty or an earlier output set."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{target}: cannot use as an output directory: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise OutputError(f"{target}: is a symbolic link; give the real directory (outputs are never "
                          f"written through links)")
    if not stat.S_ISDIR(mode):
        raise OutputError(f"{target}: exists and is not a directory")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise OutputError(f"{target.parent}: not writable; the output set is built beside {target.name} "
                          f"and renamed into place")
    present = sorted(_relative_files(target))
    if not present:
        return
    listed = read_manifest(target)
    if listed is None:
        shown = ", ".join(present[:5]) + (f" and {len(present) - 5} more" if len(present) > 5 else "")
        raise OutputError(f"{target}: holds files that are not a topoopt output set ({shown}); "
                          f"choose a new or empty directory (topoopt replaces only its own output sets)")
    foreign = [name for name in present if name != MANIFEST and name not in listed]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputError(f"{target}: holds files that its {MANIFEST} does not list ({shown}); move them "
                          f"away first (replacing the set would delete them)")


def write_manifest(directory: Path) -> Path:
    """Flush every file under ``directory`` to disk, then write ``manifest.json`` listing each
    one's path (relative, ``/``-separated), size in bytes and SHA-256; return its path."""
    files = []
    for name in sorted(_relative_files(directory)):
        path = directory / name
        digest, size = _hash_and_sync(path)
        files.append({"path": name, "bytes": size, "sha256": digest})
    manifest = directory / MANIFEST
    text = json.dumps({"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "files": files}, indent=2)
    with open(manifest, "x", encoding="utf-8") as handle:
        handle.write(text + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    _sync_directory(directory)
    return manifest


def read_manifest(directory: Path) -> dict[str, dict] | None:
    """``{path: entry}`` from ``directory``'s manifest, or None when it has no readable one."""
    path = directory / MANIFEST
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("files"), list):
        return None
    entries = [entry for entry in data["files"] if isinstance(entry, dict) and isinstance(entry.get("path"), str)]
    return {entry["path"]: entry for entry in entries}


def verify_output_set(directory: Path) -> list[str]:
    """What is wrong with the set in ``directory``: files missing, unlisted, or whose size or
    hash differs from the manifest; ``[]`` for a complete, self-consistent set."""
    listed = read_manifest(directory)
    if listed is None:
        return [f"{directory}: no valid {MANIFEST}"]
    problems = []
    present = set(_relative_files(directory)) - {MANIFEST}
    for name in sorted(present - set(listed)):
        problems.append(f"{name}: not listed in {MANIFEST}")
    for name, entry in sorted(listed.items()):
        if name not in present:
            problems.append(f"{name}: listed in {MANIFEST} but missing")
            continue
        digest, size = _hash(directory / name)
        if (size, digest) != (entry.get("bytes"), entry.get("sha256")):
            problems.append(f"{name}: {size} bytes, sha256 {digest[:12]}…; {MANIFEST} says "
                            f"{entry.get('bytes')} bytes, {str(entry.get('sha256'))[:12]}…")
    return problems


def finish_or_discard_unfinished(timeout_s: float = 10.0) -> None:
    """For a process about to leave with ``os._exit`` while another thread may be writing a set:
    wait up to ``timeout_s`` for those writes to finish, then remove the temporary directories
    of any still unfinished. The published sets are untouched either way."""
    _UNFINISHED.wait_empty(timeout_s)
    for staging in list(_UNFINISHED):
        shutil.rmtree(staging, ignore_errors=True)


class _Registry:
    """Temporary directories in use, shared by the threads of this process."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._paths: set[Path] = set()

    def add(self, path: Path) -> None:
        with self._changed:
            self._paths.add(path)

    def discard(self, path: Path) -> None:
        with self._changed:
            self._paths.discard(path)
            self._changed.notify_all()

    def wait_empty(self, timeout_s: float) -> None:
        with self._changed:
            self._changed.wait_for(lambda: not self._paths, timeout=timeout_s)

    def __iter__(self) -> Iterator[Path]:
        with self._changed:
            return iter(list(self._paths))


_UNFINISHED = _Registry()


def target_path(out_dir: str | Path) -> Path:
    """The absolute path of ``out_dir``, links not resolved; :class:`OutputError` for ``""``."""
    if str(out_dir).strip() == "":
        raise OutputError("the output directory is empty text; give a directory name")
    # Absolute without resolving links: a link named as the target is refused, not followed.
    return Path(os.path.abspath(os.fspath(out_dir)))


def _relative_files(directory: Path) -> Iterator[str]:
    """Every non-directory entry under ``directory`` (links included, never followed)."""
    for root, dirs, files in os.walk(directory, followlinks=False):
        base = Path(root).relative_to(directory)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            yield (base / name).as_posix()


def _hash(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _hash_and_sync(path: Path) -> tuple[str, int]:
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise OutputError(f"{path.name}: an output must be a regular file")
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
    return _hash(path)


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_public(staging: Path) -> None:
    """mkdtemp makes the directory 0700; the published one gets the usual mode (0777 - umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)


@contextlib.contextmanager
def _parent_locked(parent: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the parent directory while the set is swapped into place."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: the swap alone must do
        yield
        return
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _swap_into_place(staging: Path, target: Path) -> None:
    """Make ``staging`` be ``target``; afterwards ``staging`` holds the previous set (or nothing)."""
    if not os.path.lexists(target):
        os.rename(staging, target)
        staging.mkdir()  # so the caller's cleanup has the same shape either way
        return
    if _exchange(staging, target):
        return
    # No atomic exchange here: two renames, with SIGINT/SIGTERM deferred by the caller.
    previous = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=_TEMP_SUFFIX, dir=target.parent))
    os.rmdir(previous)
    os.rename(target, previous)
    os.rename(staging, target)
    os.rename(previous, staging)


def _exchange(a: Path, b: Path) -> bool:
    """``renameat2(a, b, RENAME_EXCHANGE)``; False where the platform or file system lacks it."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    status = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if status == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends (main thread only; elsewhere a no-op), so an
    interruption never falls between the two halves of a swap or its cleanup."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    # A handler installed outside Python reads as None and could not be put back: leave it.
    signals = [sig for sig in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(sig) is not None]
    previous = {sig: signal.signal(sig, lambda number, frame: caught.append(number)) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for number in caught[:1]:
            signal.raise_signal(number)


__all__ = [
    "MANIFEST",
    "OutputError",
    "check_target",
    "finish_or_discard_unfinished",
    "read_manifest",
    "target_path",
    "verify_output_set",
    "write_manifest",
    "write_output_set",
]
