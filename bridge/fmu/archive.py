"""Zip archives from others (FMUs, SSP packages) read within limits, and reproducible archives written.

Reading: every size is checked from the central directory BEFORE anything is decompressed — the number of
members, the total uncompressed size and, for large members, the compression ratio — and members are streamed
to disk in chunks, never read whole. Python's ``zipfile`` stops decompressing a member at its declared size (and
checks the CRC), so a member that lies about its size cannot exceed the checked limits. Member names must be
relative, without ``..``, backslashes or drive letters, and every written path must resolve inside the target
folder. An FMU's ``modelIdentifier`` must be a plain C identifier whose library lies inside the unpacked FMU, and
its ``modelDescription.xml`` must not declare XML entities.

Writing: members in a fixed order with a fixed time stamp (``SOURCE_DATE_EPOCH`` when set, else 1980-01-01),
fixed permissions and a fixed creator system, so that the same content gives the same bytes.
"""

from __future__ import annotations

import os
import posixpath
import re
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_file
from ..errors import BridgeError

MAX_MEMBERS = 10_000                 # members of one archive
MAX_TOTAL = 512 * 2**20              # total uncompressed size, bytes
MAX_RATIO = 200                      # uncompressed / compressed size of a member larger than RATIO_FLOOR
RATIO_FLOOR = 2**20
MAX_XML = 128 * 2**20                # an XML member (modelDescription.xml, SystemStructure.ssd) read into memory
CHUNK = 2**20
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ArchiveError(BridgeError):
    """An archive that cannot be read safely: corrupt, too large, a zip bomb, unsafe names; bad input."""


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def safe_name(name: str) -> str | None:
    r"""Return the normalized relative member name.

    Return None when it is absolute, climbs out (``..``) or is not portable (a backslash, a drive letter, a NUL).

    Parameters
    ----------
    name : str
        A member name as the archive stores it.

    Returns
    -------
    str or None
        The name with ``.`` and ``a/..`` parts resolved.

    Examples
    --------
    >>> from bridge.fmu.archive import safe_name
    >>> safe_name("binaries/./linux64/model.so"), safe_name("../evil.so"), safe_name("C:\\x.dll")
    ('binaries/linux64/model.so', None, None)
    """
    if not name or "\\" in name or ":" in name or name.startswith("/") or "\x00" in name:
        return None
    norm = posixpath.normpath(name)
    if norm in (".", "..") or norm.startswith("../") or norm.startswith("/"):
        return None
    return norm


def check_members(zf: zipfile.ZipFile, what: str) -> list[zipfile.ZipInfo]:
    """Return the members of ``zf`` after the checks of count, total size, ratio and names.

    Only the central directory is read: nothing is decompressed.

    Parameters
    ----------
    zf : zipfile.ZipFile
        The open archive.
    what : str
        How messages name the archive.

    Returns
    -------
    list of zipfile.ZipInfo
        The members.

    Raises
    ------
    ArchiveError
        When there are more than :data:`MAX_MEMBERS` members, a name is unsafe, a large member expands more than
        :data:`MAX_RATIO` times, or the total exceeds :data:`MAX_TOTAL`.
    """
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ArchiveError(f"{what}: has {len(infos)} members, more than the limit of {MAX_MEMBERS}; this is not an "
                           "archive nhbridge reads (a zip bomb?)")
    total = 0
    for info in infos:
        if safe_name(info.filename) is None:
            raise ArchiveError(f"{what}: member {info.filename!r} has an unsafe name (absolute, '..', a drive or a "
                               "backslash); repack the archive with relative names")
        total += info.file_size
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ArchiveError(f"{what}: member {info.filename!r} expands {_mib(info.compress_size)} to "
                               f"{_mib(info.file_size)} (ratio {info.file_size / max(info.compress_size, 1):.0f}, "
                               f"limit {MAX_RATIO}); refused as a zip bomb")
    if total > MAX_TOTAL:
        raise ArchiveError(f"{what}: expands to {_mib(total)}, more than the limit of {_mib(MAX_TOTAL)}; refused "
                           "(a zip bomb?)")
    return infos


def open_archive(path: str | Path, what: str = "") -> zipfile.ZipFile:
    """Open ``path`` as a zip file whose members passed :func:`check_members`.

    Parameters
    ----------
    path : str or pathlib.Path
        The archive.
    what : str
        How messages name the archive (default its path).

    Returns
    -------
    zipfile.ZipFile
        The open archive (the caller closes it).

    Raises
    ------
    ArchiveError
        When the file is not a readable zip archive or fails the checks.
    """
    what = what or str(path)
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise ArchiveError(f"{what}: not a readable zip archive ({exc}); check the file") from exc
    try:
        check_members(zf, what)
    except BaseException:
        zf.close()
        raise
    return zf


def check_archive(path: str | Path, what: str = "") -> None:
    """Raise ArchiveError unless ``path`` is a zip archive within the limits (nothing is decompressed)."""
    open_archive(path, what).close()


def read_member(zf: zipfile.ZipFile, name: str, what: str, limit: int = MAX_XML) -> bytes:
    """Read one member into memory, at most ``limit`` bytes (for XML).

    Parameters
    ----------
    zf : zipfile.ZipFile
        The open archive.
    name : str
        The member's name.
    what : str
        How messages name the archive.
    limit : int, optional
        The largest size read, in bytes.

    Returns
    -------
    bytes
        The member's content.

    Raises
    ------
    ArchiveError
        When the member is larger than ``limit`` or cannot be read.
    """
    info = zf.getinfo(name)
    if info.file_size > limit:
        raise ArchiveError(f"{what}: {name} has {_mib(info.file_size)}, more than the limit of {_mib(limit)}")
    try:
        return zf.read(info)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as exc:
        raise ArchiveError(f"{what}: cannot read {name} ({exc}); the archive is corrupt") from exc


def stream_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, what: str) -> None:
    """Copy one member to ``target`` in chunks, stopping at its checked declared size."""
    left = info.file_size
    try:
        with zf.open(info) as src, open(target, "wb") as dst:
            while True:
                chunk = src.read(min(CHUNK, left + 1))
                if not chunk:
                    break
                left -= len(chunk)
                if left < 0:
                    raise ArchiveError(f"{what}: member {info.filename} is larger than it declares; refused")
                dst.write(chunk)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as exc:
        raise ArchiveError(f"{what}: cannot unpack {info.filename} ({exc}); the archive is corrupt") from exc


def extract(path: str | Path, folder: str | Path, what: str = "") -> Path:
    """Unpack the archive ``path`` into the existing folder ``folder`` within the limits.

    Every member is streamed in chunks to a path that must resolve inside ``folder``.

    Parameters
    ----------
    path : str or pathlib.Path
        The archive.
    folder : str or pathlib.Path
        The folder to unpack into.
    what : str
        How messages name the archive (default its path).

    Returns
    -------
    pathlib.Path
        ``folder``, resolved.

    Raises
    ------
    ArchiveError
        When the archive fails the checks of :func:`open_archive` or a member would land outside ``folder``.
    """
    folder = Path(folder).resolve()
    what = what or str(path)
    with open_archive(path, what) as zf:
        for info in zf.infolist():
            target = (folder / safe_name(info.filename)).resolve()
            if target != folder and folder not in target.parents:
                raise ArchiveError(f"{what}: member {info.filename!r} would be written outside the unpack folder")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            stream_member(zf, info, target, what)
    return folder


# -- FMUs ---------------------------------------------------------------------------------------------------
def check_model_description(unzipdir: str | Path, what: str) -> None:
    """Check that ``modelDescription.xml`` exists, is within the size limit and declares no DTD or entities."""
    from lxml import etree

    xml = Path(unzipdir) / "modelDescription.xml"
    if not xml.is_file():
        raise ArchiveError(f"{what}: no modelDescription.xml in the archive; an FMU must contain it")
    if xml.stat().st_size > MAX_XML:
        raise ArchiveError(f"{what}: modelDescription.xml has {_mib(xml.stat().st_size)}, more than the limit of "
                           f"{_mib(MAX_XML)}")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        tree = etree.parse(str(xml), parser)
    except etree.XMLSyntaxError as exc:
        raise ArchiveError(f"{what}: modelDescription.xml is not well-formed XML ({exc})") from exc
    if tree.docinfo.internalDTD is not None or tree.docinfo.system_url or tree.docinfo.public_id:
        raise ArchiveError(f"{what}: modelDescription.xml declares a DTD (entities); FMI model descriptions have "
                           "none; refused")


def library_suffix(folder: str) -> str:
    """Return the shared library's suffix in the platform folder ``folder`` of ``binaries/`` (FMI 2 or FMI 3 name).

    ``.dll`` for Windows (``win64``, ``x86_64-windows``), ``.dylib`` for macOS (``darwin64``, ``aarch64-darwin``),
    else ``.so``.

    Examples
    --------
    >>> library_suffix("win64"), library_suffix("x86_64-windows"), library_suffix("aarch64-linux")
    ('.dll', '.dll', '.so')
    """
    if folder.startswith("win") or folder.endswith("-windows"):
        return ".dll"
    if folder.startswith("darwin") or folder.endswith("-darwin"):
        return ".dylib"
    return ".so"


def check_identifiers(md, unzipdir: str | Path | None, what: str, platform: str | None = None) -> None:
    """Check that every ``modelIdentifier`` is a plain identifier and (given ``unzipdir``) its libraries are inside it.

    Parameters
    ----------
    md : fmpy.model_description.ModelDescription
        The FMU's model description.
    unzipdir : str or Path, optional
        The unpacked FMU; None checks the identifiers only.
    what : str
        How messages name the FMU.
    platform : str, optional
        A platform folder of ``binaries/`` to check besides those the FMU carries (e.g. the host's, which the
        caller is about to load).

    Raises
    ------
    ArchiveError
        An identifier that is not plain, or a library of one of the FMU's platforms that resolves outside it.
    """
    root = Path(unzipdir).resolve() if unzipdir is not None else None
    folders: list[str] = []
    if root is not None:
        binaries = root / "binaries"
        folders = sorted(p.name for p in binaries.iterdir() if p.is_dir()) if binaries.is_dir() else []
        if platform and platform not in folders:
            folders.append(platform)
    for kind in ("modelExchange", "coSimulation"):
        iface = getattr(md, kind, None)
        if iface is None:
            continue
        ident = iface.modelIdentifier or ""
        if not IDENTIFIER.match(ident):
            raise ArchiveError(f"{what}: the {kind} modelIdentifier {ident!r} is not a plain identifier (letters, "
                               "digits, _); it names the binary, which must lie inside the FMU")
        for folder in folders:
            library = (root / "binaries" / folder / f"{ident}{library_suffix(folder)}").resolve()
            if root not in library.parents:
                raise ArchiveError(f"{what}: the {folder} binary of {ident!r} resolves outside the FMU ({library})")


def unpack_fmu(path: str | Path, folder: str | Path, what: str = "") -> Path:
    """Unpack an FMU into ``folder`` within the limits and check its model description (no entities).

    Parameters
    ----------
    path : str or pathlib.Path
        The FMU.
    folder : str or pathlib.Path
        The existing folder to unpack into.
    what : str
        How messages name the archive (default its path).

    Returns
    -------
    pathlib.Path
        ``folder``, resolved.

    Raises
    ------
    ArchiveError
        When the file is missing, fails the archive checks, or its ``modelDescription.xml`` is missing, too large,
        not well-formed or declares a DTD.
    """
    what = what or str(path)
    if not Path(path).is_file():
        raise ArchiveError(f"{what}: no such FMU file")
    folder = extract(path, folder, what)
    check_model_description(folder, what)
    return folder


# -- writing -----------------------------------------------------------------------------------------------
def zip_time() -> tuple[int, int, int, int, int, int]:
    """Return the time stamp of every member: ``SOURCE_DATE_EPOCH`` (UTC, not before 1980) or 1980-01-01 00:00."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.strip().isdigit():
        t = time.gmtime(max(int(epoch), 315532800))
        return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec - t.tm_sec % 2)
    return (1980, 1, 1, 0, 0, 0)


def write_zip(path: str | Path, members: Iterable[tuple[str, bytes | Path]]) -> Path:
    """Write a reproducible zip archive atomically: members in the given order, fixed time stamps and modes.

    The same members give the same bytes (see :func:`zip_time`); libraries (``.so``, ``.dll``, ``.dylib``) are
    executable.

    Parameters
    ----------
    path : str or pathlib.Path
        The archive to write.
    members : iterable of (str, bytes or pathlib.Path)
        Member name -> content, or a file whose content is copied.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ExportError
        When the archive cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> import zipfile
    >>> from pathlib import Path
    >>> from bridge.fmu.archive import write_zip
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     first = write_zip(Path(folder) / "a.zip", [("b.txt", b"x"), ("a.txt", b"y")]).read_bytes()
    ...     second = write_zip(Path(folder) / "b.zip", [("b.txt", b"x"), ("a.txt", b"y")]).read_bytes()
    ...     names = zipfile.ZipFile(Path(folder) / "a.zip").namelist()
    >>> first == second, names
    (True, ['b.txt', 'a.txt'])
    """
    stamp = zip_time()
    with atomic_file(path) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, on every platform
            executable = name.endswith((".so", ".dll", ".dylib"))
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, data.read_bytes() if isinstance(data, Path) else data)
    return Path(path)
