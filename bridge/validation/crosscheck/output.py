"""Writing cross-check folders: output-folder checks, folders staged beside their targets and swapped into place."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from ...atomic import stage_folder, swap_folder
from ...errors import ExportError, Problem
from .files import add_problem


def _existing_ancestor(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_dir(path: str | Path, problems: list[Problem], what: str = "output folder") -> None:
    """Return the problems if ``path`` cannot become a writable folder (checked before any work is done)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        add_problem(problems, path, "", f"the {what} is an existing file", "choose a folder")
        return
    base = _existing_ancestor(path)
    if not base.is_dir():
        add_problem(problems, path, "", f"cannot create the {what}: {base} is a file, not a folder",
                    "choose a writable output folder")
    elif not os.access(base, os.W_OK | os.X_OK):
        add_problem(problems, path, "", f"cannot create the {what}: {base} is not writable",
                    "choose a writable output folder")


class FolderSwap:
    """Folders written completely beside their targets, then renamed into place together.

    A failure before :meth:`commit` removes the staging folders and the parent folders created for them;
    a failure during the commit also restores the folders that were already replaced.
    """

    def __init__(self) -> None:
        self.items: list[tuple[Path, Path]] = []
        self.created: list[Path] = []

    def __enter__(self) -> FolderSwap:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is not None:
            self.abort()

    def _mkdirs(self, folder: Path) -> None:
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            if probe == probe.parent:
                break
            probe = probe.parent
        if not probe.is_dir():
            raise ExportError(f"{folder}: cannot write here ({probe} is a file, not a folder); choose a writable "
                              "output folder")
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise ExportError(f"{d}: cannot create the folder ({exc.strerror or exc}); choose a writable output "
                                  "folder") from exc
            self.created.append(d)

    def stage(self, target: Path) -> Path:
        """Return a new empty folder beside ``target`` (same file system, so the final swap is atomic).

        Leftovers of a killed run beside ``target`` are repaired first (:func:`bridge.atomic.stage_folder`).
        """
        target = Path(os.path.abspath(target))
        if target.exists() and not target.is_dir():
            raise ExportError(f"{target}: exists and is not a folder; remove it or choose another output folder")
        self._mkdirs(target.parent)
        staging = stage_folder(target)
        self.items.append((staging, target))
        return staging

    def commit(self) -> list[Path]:
        """Swap every staged folder into place (an existing target is replaced atomically); all or none."""
        done: list[tuple[Path, Path | None]] = []
        try:
            for staging, target in self.items:
                done.append((target, swap_folder(staging, target, keep_old=True)))
        except ExportError as exc:
            kept = []
            for target, old in reversed(done):
                try:
                    if old is None:
                        shutil.rmtree(target, ignore_errors=True)
                    else:
                        swap_folder(old, target)
                except ExportError:
                    kept.append(f"{target} is saved as {old}")
            self.abort()
            raise ExportError(f"cannot write the cross-check folder ({exc}); choose a writable output folder"
                              + (f" ({'; '.join(kept)})" if kept else "")) from exc
        for _, old in done:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        self.created = []
        return [target for _, target in self.items]

    def abort(self) -> None:
        """Remove every staged folder and the folders created for them; nothing is swapped in."""
        for staging, _ in self.items:
            shutil.rmtree(staging, ignore_errors=True)
        for d in reversed(self.created):
            with contextlib.suppress(OSError):
                d.rmdir()
        self.items, self.created = [], []


def write_file(path: Path, data: str | bytes) -> None:
    """Write text (UTF-8, newlines as given) or bytes; an OSError becomes an :class:`ExportError`."""
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8", newline="")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write the file ({exc.strerror or exc}); choose a writable output "
                          "folder") from exc
