"""The C compilers: finding the host's and the cross compilers, and compiling shared libraries with them.

Everything here takes file paths and compiler commands; what is compiled for which platform and where the library
goes is the FMU writer's (:mod:`bridge.fmu.build`, :mod:`bridge.fmu.platforms`). Each source compiles to an object,
cached by content and concurrently (:mod:`.objects`); the objects are linked into the library.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path

from ..errors import CompilerNotFoundError
from .objects import CompileQueue, LibraryBuild, compile_library, object_cache

NO_COMPILER_HINT = ("building an FMU needs a C compiler: install gcc or clang (Debian/Ubuntu: apt-get install gcc; "
                    "Fedora: dnf install gcc) or set CC to one")


def compiler() -> str:
    """Return the C compiler command.

    ``$CC`` when set, else ``cc``, ``gcc`` or ``clang`` on PATH; CompilerNotFoundError when there is none.
    """
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or not cc.split() or not shutil.which(cc.split()[0]):
        env = os.environ.get("CC")
        where = f"CC={env!r} is not an executable" if env else "no cc, gcc or clang on PATH"
        raise CompilerNotFoundError(f"no C compiler found ({where}); {NO_COMPILER_HINT}")
    return cc


def compiler_version(cc: str) -> str:
    """Return the first line of ``cc --version`` (``cc`` itself when it prints none, "unknown" when it cannot run)."""
    try:
        out = subprocess.run([*cc.split(), "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.splitlines()[0].strip() if out.returncode == 0 and out.stdout else cc


@cache
def is_gcc(cc: str) -> bool:
    """Tell whether the compiler command ``cc`` is gcc: it predefines ``__GNUC__`` and not ``__clang__``.

    gcc-only flags (:data:`bridge.fmu.build.GENERATED_GCC_FLAGS`) are given to it alone; False when it cannot run.
    """
    try:
        out = subprocess.run([*cc.split(), "-dM", "-E", "-x", "c", "-"], input="", capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    macros = {line.split()[1] for line in out.stdout.splitlines() if line.startswith("#define ") and " " in line[8:]}
    return out.returncode == 0 and "__GNUC__" in macros and "__clang__" not in macros


def find_cross_compiler(command: str, target: str, packages: Sequence[str]) -> str:
    """Return the cross compiler ``command`` when it is on PATH.

    Parameters
    ----------
    command : str
        The compiler's command, e.g. ``x86_64-w64-mingw32-gcc``.
    target : str
        The platform's name, for the message.
    packages : sequence of str
        The Debian packages that install it, for the message.

    Returns
    -------
    str
        ``command``.

    Raises
    ------
    CompilerNotFoundError
        It is not on PATH; the message names the packages.
    """
    if shutil.which(command):
        return command
    raise CompilerNotFoundError(
        f"the {target} binary needs the cross compiler {command}, which is not on PATH; install it "
        f"(Debian/Ubuntu: apt-get install {' '.join(packages)}) or leave {target} out of --platform")


def compile_shared_library(cc: str, binary: Path, sources: Sequence[Path], flags: Sequence[str], what: str,
                           target_flags: Iterable[str] = ("-fPIC",),
                           unit_flags: Callable[[Path], list[str]] | None = None) -> None:
    """Compile ``sources`` into the shared library ``binary``.

    C99 at -O2 plus ``unit_flags(source)`` per file (e.g. -O1 for a large generated file); ``target_flags`` are
    the platform's, by default position independent. Each source compiles to an object, cached by content
    (:mod:`.objects`) and compiled concurrently; the objects are then linked.

    An integer overflow or an integer constant too large for its type is an error, not a warning: either
    would change a number of the equations silently. No contraction of ``a*b + c`` into a fused multiply-add
    (``-ffp-contract=off``): every platform's binary rounds the same operations the same way.

    Parameters
    ----------
    cc : str
        The compiler command (may carry options, split at spaces).
    binary : Path
        The library to write.
    sources : sequence of Path
        The C files.
    flags : sequence of str
        Extra compiler flags (warnings, include folders).
    what : str
        What is compiled, for error messages.
    target_flags : iterable of str
        The platform's flags, given to the compiler and the linker.
    unit_flags : callable, optional
        Extra flags of one source file.

    Raises
    ------
    ExportError
        Compiling or linking fails.
    """
    target_flags = list(target_flags)
    compile_library(cc, binary, sources, _compile_flags(target_flags, flags), [*target_flags, "-shared"], what,
                    object_cache(), unit_flags)


def _compile_flags(target_flags: list[str], flags: Sequence[str]) -> list[str]:
    """Return the flags of every C file of a shared library (see :func:`compile_shared_library`)."""
    return ["-std=c99", "-O2", "-ffp-contract=off", *target_flags, "-Werror=overflow", *flags]


def shared_library_build(queue: CompileQueue, cc: str, binary: Path, flags: Sequence[str], what: str,
                         target_flags: Iterable[str] = ("-fPIC",),
                         unit_flags: Callable[[Path], list[str]] | None = None) -> LibraryBuild:
    """Start the shared library ``binary`` on ``queue``, compiled as :func:`compile_shared_library` compiles it.

    Queue its sources with :meth:`~.objects.LibraryBuild.add` (some while others are still being generated),
    then :meth:`~.objects.LibraryBuild.link`. The parameters are :func:`compile_shared_library`'s.
    """
    target_flags = list(target_flags)
    return queue.library(cc, binary, _compile_flags(target_flags, flags), [*target_flags, "-shared"], what,
                         unit_flags)


__all__ = ["NO_COMPILER_HINT", "compile_shared_library", "compiler", "compiler_version", "find_cross_compiler",
           "is_gcc", "shared_library_build"]
