"""Compiled objects of the FMU builds, cached by content in a user cache folder.

Every C file of an FMU is compiled on its own (``cc -c``, the files concurrently on the usable cores) and the
objects are linked into the shared library. An object is cached under a key that hashes everything its bytes
depend on: the source, every header of the include folders it includes, the compiler (its command, the resolved
executable's size and time stamp, ``--version`` and ``-dumpmachine``) and the flags, so the runtime's fixed
files are compiled once per compiler and platform, and a rebuild whose ``model.c`` did not change links only.

The folder is ``$NHBRIDGE_OBJECT_CACHE`` when set (``off`` or an empty value: no cache), else
``$XDG_CACHE_HOME/nhbridge/objects`` (``~/.cache/nhbridge/objects``). An entry is one file written atomically
(a temporary file renamed over it): a magic line, the SHA-256 of the object and the object. An entry whose
digest does not match is counted as corrupt, removed and compiled anew; concurrent builds write identical
entries, the last rename wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path

from ..errors import ExportError

#: environment variable naming the cache folder (``off`` or empty: no cache)
CACHE_ENV = "NHBRIDGE_OBJECT_CACHE"
_MAGIC = b"nhbridge-object-1\n"
_DIGEST = hashlib.sha256().digest_size


def cache_folder() -> Path | None:
    """Return the object cache's folder from the environment; None when caching is off.

    ``$NHBRIDGE_OBJECT_CACHE`` when set (``off``, ``0``, ``no``, ``false`` or empty: None), else
    ``$XDG_CACHE_HOME/nhbridge/objects`` (``~/.cache/nhbridge/objects``).
    """
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "no", "false") else Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nhbridge" / "objects"


class ObjectCache:
    """Compiled objects by key in ``folder`` (None: nothing cached), safe to share between threads.

    ``stats`` counts ``hit``, ``miss``, ``corrupt`` and ``stored`` (also ``unwritable`` where the folder
    cannot be written: the build goes on uncached). Other entries (the generated C, :mod:`bridge.fmu.code_cache`)
    share the folder and the format under their own suffix, counted under their kind's prefix (``code_hit``...).
    """

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.stats: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def entry(self, key: str, suffix: str = ".o") -> Path | None:
        """Return the entry file of ``key`` (None without a folder)."""
        return None if self.folder is None else self.folder / key[:2] / f"{key}{suffix}"

    def read(self, key: str, suffix: str = ".o", kind: str = "") -> bytes | None:
        """Return the content of the entry ``key``; None when it is absent or corrupt (then removed).

        ``kind`` prefixes the statistics' names (``""``: the objects' ``hit``, ``miss``, ``corrupt``).
        """
        path = self.entry(key, suffix)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            self._count(f"{kind}miss")
            return None
        head, digest, body = data[:len(_MAGIC)], data[len(_MAGIC):len(_MAGIC) + _DIGEST], data[len(_MAGIC) + _DIGEST:]
        if head != _MAGIC or hashlib.sha256(body).digest() != digest:
            self._count(f"{kind}corrupt")
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self._count(f"{kind}hit")
        return body

    def write(self, key: str, body: bytes, suffix: str = ".o", kind: str = "") -> None:
        """Store ``body`` as the entry ``key`` atomically (a folder that cannot be written is skipped)."""
        path = self.entry(key, suffix)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(_MAGIC + hashlib.sha256(body).digest() + body)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            self._count(f"{kind}unwritable")
            return
        self._count(f"{kind}stored")

    def load(self, key: str, target: Path) -> bool:
        """Write the cached object of ``key`` to ``target``; False when it is absent or corrupt (then removed)."""
        body = self.read(key)
        if body is None:
            return False
        target.write_bytes(body)
        return True

    def store(self, key: str, obj: Path) -> None:
        """Cache the object file ``obj`` under ``key`` atomically (a folder that cannot be written is skipped)."""
        if self.folder is not None:
            self.write(key, obj.read_bytes())


_CACHES: dict[Path | None, ObjectCache] = {}
_CACHES_LOCK = threading.Lock()


def object_cache() -> ObjectCache:
    """Return the cache of the current :func:`cache_folder` (one object per folder, its statistics kept)."""
    folder = cache_folder()
    with _CACHES_LOCK:
        if folder not in _CACHES:
            _CACHES[folder] = ObjectCache(folder)
        return _CACHES[folder]


@cache
def _compiler_identity(cc: str) -> bytes:
    """Identify the compiler ``cc`` by its command, executable (path, size, time stamp), version and target."""
    exe = shutil.which(cc.split()[0]) or cc.split()[0]
    try:
        st = os.stat(exe)
        stamp = f"{os.path.realpath(exe)}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = exe
    out = []
    for arg in ("--version", "-dumpmachine"):
        try:
            proc = subprocess.run([*cc.split(), arg], capture_output=True, text=True, timeout=60)
            out.append(proc.stdout)
        except (OSError, subprocess.SubprocessError):
            out.append("")
    return "\0".join([cc, stamp, *out]).encode()


def included_headers(source: Path, include_dirs: Sequence[Path]) -> list[Path] | None:
    """Return the headers of ``include_dirs`` that ``source`` includes, directly or through another of them.

    ``#include "name"`` is looked up in the including file's folder, then in ``include_dirs`` in order;
    ``#include <name>`` in ``include_dirs`` only (a name found in none of them is a system header: the
    compiler's identity stands for it). Every ``#include`` line counts, whatever ``#if`` it stands under, so
    the list holds every header the compiler may read. None when an ``#include`` names no file literally
    (a macro): then every header of the folders may be read.

    Examples
    --------
    ``nhb_state.c`` including ``nhb_internal.h``, which includes ``nhb_core.h`` and ``<math.h>``, gives
    ``[.../nhb_internal.h, .../nhb_core.h]``.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    todo = [source]
    while todo:
        current = todo.pop()
        for match in _INCLUDE.finditer(current.read_text(encoding="utf-8", errors="replace")):
            quoted, angled = match.group(1), match.group(2)
            if quoted is None and angled is None:
                return None
            folders = [current.parent, *include_dirs] if quoted is not None else list(include_dirs)
            for folder in folders:
                header = Path(folder) / (quoted if quoted is not None else angled)
                if header.is_file():
                    resolved = header.resolve()
                    if resolved not in seen:
                        seen.add(resolved)
                        found.append(header)
                        todo.append(header)
                    break
    return found


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>|[^\n]*)', re.MULTILINE)


def object_key(cc: str, source: Path, flags: Sequence[str], include_dirs: Iterable[Path]) -> str:
    """Compute the cache key of compiling ``source`` with ``cc`` and ``flags``.

    The key is the SHA-256 over the compiler's identity, the flags (``-I`` folders left out: their headers
    stand for them), the source's name and content and, by name and content, every header of
    ``include_dirs`` the source includes (:func:`included_headers`; every ``.h`` file of the folders when an
    include names its file by a macro), each part prefixed by its length. A runtime file that includes the
    same headers therefore compiles once for FMI 2 and FMI 3 builds, whose include folders differ only in the
    FMI headers it does not read.

    Returns
    -------
    str
        64 hex digits.
    """
    h = hashlib.sha256()
    options = [f for f in flags if not f.startswith("-I")]  # the folders stand for their headers, hashed below
    for part in (_compiler_identity(cc), "\0".join(options).encode(), source.name.encode(), source.read_bytes()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    folders = [Path(f) for f in include_dirs]
    headers = included_headers(source, folders)
    if headers is None:
        headers = [header for folder in folders for header in sorted(folder.glob("*.h"))]
    for header in headers:
        for part in (header.name.encode(), header.read_bytes()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def _too_large(stderr: str) -> bool:
    """Tell whether the compiler reported an integer constant too large for its type."""
    return any(t in stderr for t in ("integer constant is too large", "integer literal is too large"))


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``cmd`` in ``cwd``, its output captured as text."""
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)


def compile_object(cc: str, source: Path, obj: Path, flags: Sequence[str], what: str,
                   cache: ObjectCache | None = None,
                   run: Callable[[list[str], Path], subprocess.CompletedProcess] | None = None) -> None:
    """Compile ``source`` to ``obj`` (``cc -c``) with ``flags``, or take the object from ``cache``.

    The compiler runs in the source's folder, so the object names it alone. An integer constant too large for
    its type is an error (a number of the equations would change silently). ``run(command, folder)`` runs the
    compiler (default :func:`subprocess.run`; a :class:`CompileQueue` passes its own, which it can stop).

    Raises
    ------
    ExportError
        The compiler fails or reports a constant too large; ``what`` names the build in the message.
    """
    include_dirs = [source.parent, *(Path(f[2:]) for f in flags if f.startswith("-I") and len(f) > 2)]
    key = object_key(cc, source, flags, include_dirs) if cache is not None and cache.folder is not None else ""
    if key and cache is not None and cache.load(key, obj):
        return
    cmd = [*cc.split(), *flags, "-c", source.name, "-o", str(obj.resolve())]
    proc = (run or _run)(cmd, source.parent)
    if proc.returncode != 0 or _too_large(proc.stderr):
        raise ExportError(f"compiling {what} failed ({cmd[0]}, {source.name}): {proc.stderr.strip()[:2000]}")
    if key and cache is not None:
        cache.store(key, obj)


#: a compiler runs in a process group of its own, so that stopping a build stops the driver and the programs it
#: runs (cc1, as) together
_OWN_GROUP: dict = {"process_group": 0} if os.name == "posix" else {}


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    """Send ``signum`` to the process group of the compiler ``proc`` (to ``proc`` alone where there are none)."""
    with contextlib.suppress(OSError):
        if _OWN_GROUP:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)


def usable_cores() -> int:
    """Count the cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class CompileQueue:
    """C files compiling to objects on worker threads (one per usable core), the most urgent queued file first.

    Files can be queued while the caller goes on (generating the C of other files): each compiler runs in its
    own process, so the compilers and the caller's Python share the cores. Queue the files of one library
    through :meth:`library`. Leaving the ``with`` block cancels what has not started and waits for the rest;
    leaving it by an exception (a failed build, Ctrl-C) also stops the compilers that are running
    (:meth:`abort`), so no compiler outlives the build and no object of a stopped compiler is kept.
    """

    def __init__(self, cache: ObjectCache | None = None, workers: int | None = None):
        self.cache = cache
        self._pool = ThreadPoolExecutor(max_workers=workers or usable_cores())
        self._pending: list[tuple[float, int, Callable[[], None], Future]] = []
        self._lock = threading.Lock()
        self._order = 0
        self._running: set[subprocess.Popen] = set()
        self._stopped = False

    def submit(self, job: Callable[[], None], priority: float) -> Future:
        """Queue ``job``; of the queued jobs the one with the highest ``priority`` (then the earliest) runs next."""
        done: Future = Future()
        with self._lock:
            heapq.heappush(self._pending, (-priority, self._order, job, done))
            self._order += 1
        self._pool.submit(self._run_next)
        return done

    def _run_next(self) -> None:
        with self._lock:
            if not self._pending:
                return
            _, _, job, done = heapq.heappop(self._pending)
        if not done.set_running_or_notify_cancel():
            return
        try:
            job()
        except BaseException as exc:  # handed to whoever waits for the object
            done.set_exception(exc)
        else:
            done.set_result(None)

    def run(self, cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
        """Run the compiler command ``cmd`` in ``cwd`` as a child that :meth:`abort` stops.

        Raises
        ------
        ExportError
            The queue was stopped.
        """
        with self._lock:
            if self._stopped:
                raise ExportError("the build was stopped")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                                    **_OWN_GROUP)
            self._running.add(proc)
        try:
            out, err = proc.communicate()
        finally:
            with self._lock:
                self._running.discard(proc)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def library(self, cc: str, binary: Path, flags: Sequence[str], link_flags: Sequence[str], what: str,
                unit_flags: Callable[[Path], Iterable[str]] | None = None) -> LibraryBuild:
        """Start the shared library ``binary``: its sources are queued with :meth:`LibraryBuild.add`."""
        return LibraryBuild(self, cc, binary, flags, link_flags, what, unit_flags)

    def close(self) -> None:
        """Cancel the jobs that have not started and wait for the running ones."""
        with self._lock:
            pending, self._pending = self._pending, []
        for *_, done in pending:
            done.cancel()
        self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Cancel the jobs that have not started, kill the running compilers and wait for their threads.

        A killed compiler's job fails (its object is neither used nor cached).
        """
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for proc in running:
            _signal_group(proc, signal.SIGTERM)  # the compiler driver removes its temporary files
        for proc in running:
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
        self.close()

    def __enter__(self) -> CompileQueue:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class LibraryBuild:
    """One shared library: its sources compile on a :class:`CompileQueue`, then :meth:`link` links them.

    The objects go to a temporary folder, removed by :meth:`link` (or :meth:`discard`).
    """

    def __init__(self, queue: CompileQueue, cc: str, binary: Path, flags: Sequence[str], link_flags: Sequence[str],
                 what: str, unit_flags: Callable[[Path], Iterable[str]] | None = None):
        self.queue, self.cc, self.binary, self.what = queue, cc, binary, what
        self.flags, self.link_flags, self.unit_flags = list(flags), list(link_flags), unit_flags
        self._tmp = Path(tempfile.mkdtemp(prefix="nhbridge-obj-"))
        self._objects: list[tuple[Path, Future]] = []

    def add(self, sources: Iterable[Path], urgency: float = 0.0) -> None:
        """Queue ``sources`` (larger files first; a higher ``urgency`` before every file of a lower one)."""
        for source in sources:
            obj = self._tmp / f"{len(self._objects)}-{source.stem}.o"
            flags = [*self.flags, *(self.unit_flags(source) if self.unit_flags else [])]

            def job(source: Path = source, obj: Path = obj, flags: list[str] = flags) -> None:
                compile_object(self.cc, source, obj, flags, self.what, self.queue.cache, self.queue.run)

            size = source.stat().st_size
            self._objects.append((obj, self.queue.submit(job, urgency * 2.0**40 + size)))

    def link(self) -> None:
        """Wait for the objects (the first failure is raised) and link them with the C math library into ``binary``.

        A failure (or Ctrl-C) stops the queue's other compilers (:meth:`CompileQueue.abort`).

        Raises
        ------
        ExportError
            Compiling or linking fails.
        """
        try:
            for _, done in self._objects:
                done.result()
            self.binary.parent.mkdir(parents=True, exist_ok=True)
            cmd = [*self.cc.split(), *self.link_flags, "-o", str(self.binary), *(str(o) for o, _ in self._objects),
                   "-lm"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise ExportError(f"linking {self.what} failed ({cmd[0]}): {proc.stderr.strip()[:2000]}")
        except BaseException:
            self.queue.abort()  # a failed object or Ctrl-C: stop the other compilers rather than wait for them
            raise
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the objects' folder (after the jobs that write into it are done or cancelled)."""
        for _, done in self._objects:
            if not done.cancel():
                with contextlib.suppress(BaseException):
                    done.exception()  # waits for a running compiler
        shutil.rmtree(self._tmp, ignore_errors=True)


def compile_library(cc: str, binary: Path, sources: Sequence[Path], flags: Sequence[str], link_flags: Sequence[str],
                    what: str, cache: ObjectCache | None = None, unit_flags=None) -> None:
    """Build the shared library ``binary`` from ``sources``.

    Each source compiles to an object (cached, concurrently on the usable cores, the largest first) with
    ``flags`` plus ``unit_flags(source)`` (extra flags per file, e.g. its optimisation level); the objects are
    then linked with ``link_flags`` and the C math library (:class:`CompileQueue`).

    Raises
    ------
    ExportError
        Compiling or linking fails.
    """
    with CompileQueue(cache, max(1, min(usable_cores(), len(sources)))) as queue:
        build = queue.library(cc, binary, flags, link_flags, what, unit_flags)
        build.add(sources)
        build.link()


__all__ = ["CACHE_ENV", "CompileQueue", "LibraryBuild", "ObjectCache", "cache_folder", "compile_library",
           "compile_object", "object_cache", "object_key", "usable_cores"]
