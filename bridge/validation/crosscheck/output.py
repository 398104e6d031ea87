"""Writing cross-check folders: output-folder checks, folders staged beside their targets and renamed into place."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from ...errors import ExportError, Problem
from .files import add_problem


def _existing_ancestor(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_dir(path: str | Path, problems: list[Problem], what: str = "output folder") -> None:
    """Problems if ``path`` cannot become a writable folder (checked before any work is done)."""
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
        """A new empty folder beside ``target`` (same file system, so the final rename is atomic)."""
        target = Path(os.path.abspath(target))
        if target.exists() and not target.is_dir():
            raise ExportError(f"{target}: exists and is not a folder; remove it or choose another output folder")
        self._mkdirs(target.parent)
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(staging, 0o777 & ~mask)  # mkdtemp makes 0700; give the folder the usual permissions
        except OSError as exc:
            raise ExportError(f"{target.parent}: cannot write here ({exc.strerror or exc}); choose a writable "
                              "output folder") from exc
        self.items.append((staging, target))
        return staging

    def commit(self) -> list[Path]:
        """Rename every staged folder into place (an existing target is replaced); all or none."""
        done: list[tuple[Path, Path | None]] = []
        try:
            for staging, target in self.items:
                backup = None
                if target.exists():
                    backup = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
                    os.rename(target, backup)
                done.append((target, backup))
                os.rename(staging, target)
        except OSError as exc:
            kept = []
            for target, backup in reversed(done):
                shutil.rmtree(target, ignore_errors=True)  # the new folder (absent when its rename failed)
                if backup is not None:
                    try:
                        os.rename(backup, target)
                    except OSError:
                        kept.append(f"{target} is saved as {backup}")
            self.abort()
            raise ExportError(f"cannot write the cross-check folder ({exc.strerror or exc}); choose a writable "
                              "output folder" + (f" ({'; '.join(kept)})" if kept else "")) from exc
        for _, backup in done:
            if backup is not None:
                shutil.rmtree(backup, ignore_errors=True)
        self.created = []
        return [target for _, target in self.items]

    def abort(self) -> None:
        for staging, _ in self.items:
            shutil.rmtree(staging, ignore_errors=True)
        for d in reversed(self.created):
            try:
                d.rmdir()
            except OSError:
                pass
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
