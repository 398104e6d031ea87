"""Atomic output and clean process exits.

Files: written to a temporary file beside the target, then renamed (:func:`atomic_file`). Folders: written
completely into a staging folder beside the target, then swapped in with one atomic exchange
(``renameat2(RENAME_EXCHANGE)``; where the file system lacks it, two renames whose interruption the next run
repairs) (:func:`atomic_folder`). Every temporary name carries the process id (``.<name>.<pid>-<random>.tmp``,
``nhbridge-[<kind>-]<pid>-<random>``), so the leftovers of a process that was killed are recognised and removed
by the next run (:func:`sweep`). :func:`guard_process` (called by the command line) turns SIGTERM into an
exception, so ``finally`` blocks run, and keeps Python's temporary files in one folder per process.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ExportError

_TAGGED = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[A-Za-z0-9_]+\.(?:tmp|old)$")
_TEMP = re.compile(r"^nhbridge-(?:[a-z]+(?:-[a-z]+)*-)?(?P<pid>\d+)-[A-Za-z0-9_]+$")


def alive(pid: int) -> bool:
    """Return whether a process with this id exists (a process of another user counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def sweep(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files and folders of dead processes in ``directory``.

    ``.<name>.<pid>-*.tmp`` (only those of ``name`` when given) and ``nhbridge-*-<pid>-*`` folders; a backup
    ``.<name>.<pid>-*.old`` of a dead process is first moved back to ``name`` when that is missing (see
    :func:`recover_folder`). The removed paths.
    """
    directory = Path(directory)
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _TAGGED.match(entry.name)
        if m and (name is None or m["name"] == name) and not alive(int(m["pid"])):
            if entry.name.endswith(".old"):
                target = directory / m["name"]
                if not target.exists():
                    try:
                        os.rename(entry, target)  # an interrupted swap: the old folder comes back
                        continue
                    except OSError:
                        pass
            _remove(entry)
            removed.append(entry)
            continue
        t = _TEMP.match(entry.name)
        if name is None and t and not alive(int(t["pid"])):
            try:
                if entry.is_dir() and entry.stat().st_uid == os.getuid():
                    _remove(entry)
                    removed.append(entry)
            except OSError:
                continue
    return removed


def temp_folder(kind: str, dir: str | Path | None = None) -> Path:
    """Return a new temporary folder ``nhbridge-<kind>-<pid>-<random>``.

    It is removed by :func:`sweep` once the process died.
    """
    return Path(tempfile.mkdtemp(prefix=f"nhbridge-{kind}-{os.getpid()}-", dir=dir))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    r"""Yield a temporary path beside ``path``; on success it replaces ``path``, on failure it is removed.

    Readers see the old file or the new one, never half of it. Leftovers of dead processes beside ``path`` are
    removed first (:func:`sweep`).

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write; its folder is created when missing.

    Yields
    ------
    pathlib.Path
        The temporary file to write (same folder, so the final rename is atomic).

    Raises
    ------
    ExportError
        When the folder or the file cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bridge.atomic import atomic_file
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "table.csv"
    ...     with atomic_file(target) as tmp:
    ...         _ = tmp.write_text("time,x\n0,1\n")
    ...         written_yet = target.exists()
    ...     print(written_yet, target.read_text().splitlines())
    False ['time,x', '0,1']
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        sweep(directory, path.name)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=directory)
        os.close(fd)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write here ({exc.strerror or exc}); choose a writable output path") from exc
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"{path}: cannot write the file ({exc.strerror or exc}); choose a writable output path") \
            from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8, line endings as given, flushed to disk).

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write.
    text : str
        Its content.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ExportError
        When the file cannot be written; an existing file is then left as it was.
    """
    with atomic_file(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    return Path(path)


# -- folders ------------------------------------------------------------------------------------------------
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where the system or file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def recover_folder(target: str | Path) -> None:
    """Repair what a killed run left beside ``target``: restore its backup when it is missing, remove staging."""
    target = Path(os.path.abspath(target))
    sweep(target.parent, target.name)


def stage_folder(target: str | Path) -> Path:
    """Return a new empty folder ``.<name>.<pid>-<random>.tmp`` beside ``target`` (same file system), after recovery."""
    target = Path(os.path.abspath(target))
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target}: exists and is not a folder; remove it or choose another output folder")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        recover_folder(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent))
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes 0700; give the folder the usual permissions
    except OSError as exc:
        raise ExportError(f"{target.parent}: cannot write here ({exc.strerror or exc}); choose a writable output "
                          "folder") from exc
    return staging


def swap_folder(staging: str | Path, target: str | Path, keep_old: bool = False) -> Path | None:
    """Put the complete folder ``staging`` in place of ``target`` (replacing it); readers see one or the other.

    Where Linux's ``renameat2`` can exchange the two, the swap is a single atomic step; elsewhere ``target`` is moved
    aside and put back when the second rename fails.

    Parameters
    ----------
    staging : str or pathlib.Path
        The complete new folder, on the same file system as ``target``.
    target : str or pathlib.Path
        The folder to replace (it may be missing).
    keep_old : bool, optional
        Return the old folder instead of removing it, so that the caller can put it back with another swap.

    Returns
    -------
    pathlib.Path or None
        With ``keep_old``, the old folder under a temporary name beside ``target`` (None when there was none).

    Raises
    ------
    ExportError
        When the folder cannot be put in place.
    """
    staging, target = Path(staging), Path(os.path.abspath(target))
    old: Path | None = None
    try:
        if not target.exists():
            os.rename(staging, target)
        elif _exchange(staging, target):
            old = staging  # now the old folder
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".old", dir=target.parent))
            os.rename(target, old)  # replaces the empty backup folder
            try:
                os.rename(staging, target)
            except OSError:
                os.rename(old, target)
                raise
    except OSError as exc:
        raise ExportError(f"{target}: cannot put the folder in place ({exc.strerror or exc}); choose a writable "
                          "output folder") from exc
    if old is not None and not keep_old:
        shutil.rmtree(old, ignore_errors=True)
        return None
    return old


@contextmanager
def atomic_folder(target: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``target``.

    On success it replaces ``target`` as a whole, on failure it is removed. A kill at any moment leaves the old folder
    or the new one (repaired by the next run).

    Parameters
    ----------
    target : str or pathlib.Path
        The folder to write.

    Yields
    ------
    pathlib.Path
        The staging folder to fill.

    Raises
    ------
    ExportError
        When ``target`` is a file or its folder cannot be written.
    """
    staging = stage_folder(target)
    try:
        yield staging
        swap_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# -- processes ----------------------------------------------------------------------------------------------
class Terminated(KeyboardInterrupt):
    """The process received SIGTERM; raised like Ctrl-C so that ``finally`` blocks clean up."""


_SESSION: list[Path] = []


_SIGNALLED: list[bool] = [False]  # SIGTERM arrived (its exception may come back altered by compiled code)


def _on_sigterm(signum, frame) -> None:
    _SIGNALLED[0] = True
    raise Terminated("terminated (SIGTERM)")


def interrupt_pending(exc: BaseException | None = None) -> bool:
    """Return whether SIGTERM arrived or ``exc`` is (or was caused by) an interrupt.

    A compiled extension (symengine calling back into sympy) may turn the :class:`KeyboardInterrupt` raised inside it
    into another exception.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return _SIGNALLED[0]


def _end_session(folder: Path, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child
        shutil.rmtree(folder, ignore_errors=True)


def guard_process() -> None:
    """Set up a command-line process: SIGTERM handling and the temporary folder.

    SIGTERM raises :class:`Terminated`; the leftovers of dead nhbridge processes in the temporary folder are removed;
    Python's temporary files of this process go to ``nhbridge-<pid>-<random>``, removed at exit. Idempotent.
    """
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) in (
            signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _on_sigterm)
    if _SESSION:
        return
    base = tempfile.gettempdir()
    sweep(base)
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"nhbridge-{os.getpid()}-", dir=base))
    except OSError:
        return
    _SESSION.append(folder)
    tempfile.tempdir = str(folder)
    atexit.register(_end_session, folder, os.getpid())
