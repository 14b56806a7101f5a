"""Uploaded bots on disk: archives unpacked as if every byte were hostile,
and one uploaded source file made into a bot folder.

An archive comes from a stranger, so unpack() trusts nothing in it:

- The format is read from its magic bytes, never its name: zip, tar, or a
  gzip-compressed tar. Anything else is refused, naming those three.
- Nothing is extracted by a library (no extractall): every member's name is
  judged first (relative, no '..', no backslash, no control character, no
  drive letter, at most ``max_depth`` parts and ``max_path_chars``
  characters), then its kind (a regular file or a folder: links, devices,
  FIFOs and sparse files are refused), then each file is written by this
  module with ``O_CREAT|O_EXCL|O_NOFOLLOW`` into folders it made itself,
  opened one part at a time (``dir_fd``), so nothing in the archive can
  point a write outside ``dest``.
- Two members that differ only in letter case (or Unicode form) are refused
  as duplicates: a folder copied to a case-insensitive disk must not merge
  them silently; so are a file and a folder of one name.
- Sizes are judged twice: the declared size before a byte is read, and the
  bytes that actually come out, counted chunk by chunk (64 KiB), so a member
  that lies about its size stops at the limit. The ratio of bytes out to
  bytes in is watched as they come out, per zip member and for the whole
  archive (a gzip stream is one compressed stream for all its members, so
  there the whole stream is watched): a decompression bomb stops within a
  chunk of ``max_ratio``. The first ``ratio_grace_bytes`` of any file never
  count against the ratio, since small text files compress very well.
- Memory stays bounded whatever the archive holds (64 KiB chunks): zip
  members and the gzip stream are inflated with zlib's output bounded per
  call (zipfile and gzip.GzipFile do that; tarfile's own "r|gz" does not,
  which is why the gzip stream is inflated here and tarfile reads plain tar
  from it), and the tar headers tarfile reads whole (GNU long names, pax
  records) are capped per member; a zip's central directory, which zipfile
  reads whole (an object per member), is judged first by the member count
  and size its end record gives.
- Zip members compressed other than stored or deflated are refused (bzip2
  and LZMA inflate without a bound per call), as are encrypted ones.
- On any refusal ``dest`` is removed whole: nothing half-extracted stays.

write_files() writes a bundle of files (path, executable bit, bytes) that
came back from elsewhere (a validation's built files, from an arena worker)
with the same rules for names, counts, sizes and writes.

unpack() returns the folder that holds bot.toml: ``dest`` itself, or its
single top folder (people zip the folder itself). A top-level ``__MACOSX``
folder (what the macOS Finder adds to a zip) is left out.

from_source() turns one source file and a language into a bot folder with a
bot.toml written like the starter kits' (harness/kits), and
load_uploaded_manifest() reads an uploaded folder's manifest with the
catalog's rules (its containment included) plus the server's: the name is
the one it was uploaded as, and the bot stands in its own folder.

Every refusal is an ArchiveError whose message is for the person who sent
the upload: what was wrong, the member (shown with ascii()), and the limit
with its number. It never names a path on the server.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import stat
import struct
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from harness.proc import catalog
from harness.proc.catalog import BotSpec, ManifestError

CHUNK_BYTES = 64 << 10
FORMATS = "a zip, a tar, or a gzip-compressed tar (.tar.gz)"
# Tar headers tarfile reads whole before we see the member (GNU long names,
# pax records): what a legitimate member needs (a header, a pax record, a
# long name, padding) is under 3 KiB; more is a header bomb.
HEADER_BYTES_PER_MEMBER = 4 << 10
HEADER_BYTES_GRACE = 256 << 10
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
IGNORED_TOP_FOLDERS = ("__MACOSX",)  # what the macOS Finder adds to a zip


class ArchiveError(ValueError):
    """An upload refused. Its str is the message for whoever sent it: what
    was wrong, which member, and the limit with its number."""


@dataclass(frozen=True)
class UnpackLimits:
    max_archive_bytes: int = 8 << 20
    max_members: int = catalog.MAX_BOT_FILES  # files and folders
    max_file_bytes: int = catalog.MAX_FILE_BYTES
    max_total_bytes: int = catalog.MAX_BUNDLE_BYTES
    max_ratio: int = 100  # bytes out over bytes in, per zip member and for the whole archive
    ratio_grace_bytes: int = 1 << 20  # bytes of any file that never count against the ratio
    max_depth: int = 16  # path parts
    max_path_chars: int = 255  # a member's whole path, in UTF-8 bytes


# What the archive libraries raise on damaged or malformed input; ArchiveError
# is a ValueError, so it is re-raised before these are caught.
_DAMAGED = (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, zlib.error,
            UnicodeError, NotImplementedError, struct.error, ValueError, OSError)


def unpack(archive: Path, dest: Path, limits: UnpackLimits = UnpackLimits()) -> Path:
    """Unpack ``archive`` into ``dest`` (which must not exist; made 0o700)
    and return the folder holding bot.toml; ArchiveError, with ``dest``
    removed, for anything refused (module docstring)."""
    size = archive.stat().st_size
    if size > limits.max_archive_bytes:
        raise ArchiveError(f"the archive is {size:,} bytes, over the {limits.max_archive_bytes:,} "
                           "bytes an upload may have")
    with open(archive, "rb") as raw:
        kind = _format_of(raw.read(512))
        raw.seek(0)
        if kind is None:
            raise ArchiveError(f"not an archive this server reads: upload {FORMATS} (judged by "
                               "its first bytes, not its name), or one source file")
        dest.mkdir(mode=0o700)  # FileExistsError if it exists: the caller's mistake, not ours to remove
        try:
            writer = _Writer(dest)
            try:
                budget = _Budget(limits, size)
                if kind == "zip":
                    _unpack_zip(raw, writer, budget)
                else:
                    _unpack_tar(raw, kind == "tar.gz", writer, budget)
            finally:
                writer.close()
            return _bot_folder(dest)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise


def _format_of(head: bytes) -> str | None:
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):  # a local file header; an empty zip
        return "zip"
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head[257:262] == b"ustar":  # POSIX and GNU tar (Python writes pax, also "ustar")
        return "tar"
    return None


@contextlib.contextmanager
def _reading(what: str) -> Iterator[None]:
    """Turn a library's complaint about damaged input into an ArchiveError.
    Only reads go through here: a failure to write is the server's, not the
    upload's, and stays an OSError."""
    try:
        yield
    except ArchiveError:
        raise
    except _DAMAGED as exc:
        raise ArchiveError(f"{what} is damaged or malformed: "
                           f"{_printable(f'{type(exc).__name__}: {exc}')}") from None


def _printable(text: str) -> str:
    """``text`` with control and non-ASCII characters escaped."""
    return ascii(text)[1:-1]


# ---- names ---------------------------------------------------------------------------------

_DRIVE = re.compile(r"[A-Za-z]:")


def _parts_of(name: str, limits: UnpackLimits) -> tuple[str, ...]:
    """The parts of a member's path, refused unless it stays inside the bot's
    folder on every system; "." parts and a leading "./" are dropped."""
    shown = f"archive member {ascii(name)}"
    if "\0" in name:
        raise ArchiveError(f"{shown} has a NUL character in its name")
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise ArchiveError(f"{shown} has a control character in its name")
    if any(unicodedata.category(char) == "Cs" for char in name):
        raise ArchiveError(f"{shown} has a name that is not valid UTF-8")
    if "\\" in name:
        raise ArchiveError(f"{shown} has a backslash in its name; use '/' between folders")
    if name.startswith("/"):
        raise ArchiveError(f"{shown} is an absolute path; members must be relative to the "
                           "bot's folder")
    if _DRIVE.match(name):
        raise ArchiveError(f"{shown} starts with a drive letter; members must be relative to "
                           "the bot's folder")
    length = len(name.encode())
    if length > limits.max_path_chars:
        raise ArchiveError(f"{shown} has a path of {length:,} characters, over the "
                           f"{limits.max_path_chars:,} a member may have")
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"{shown} has a '..' part; members must stay inside the bot's folder")
    if len(parts) > limits.max_depth:
        raise ArchiveError(f"{shown} is {len(parts)} parts deep, over the {limits.max_depth} "
                           "a member's path may have")
    return parts


class _Names:
    """Every path the archive makes (its members and the folders above
    them), by folded spelling: duplicates, case duplicates and a file that
    is also a folder are refused."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, bool, bool]] = {}  # folded -> (path, is_dir, listed)

    def claim(self, parts: tuple[str, ...], is_dir: bool, name: str) -> None:
        for depth in range(1, len(parts)):
            self._claim("/".join(parts[:depth]), True, False, name)
        self._claim("/".join(parts), is_dir, True, name)

    def _claim(self, path: str, is_dir: bool, listed: bool, name: str) -> None:
        shown = f"archive member {ascii(name)}"
        folded = unicodedata.normalize("NFKC", path).casefold()
        if folded not in self.seen:
            self.seen[folded] = (path, is_dir, listed)
            return
        earlier, earlier_is_dir, earlier_listed = self.seen[folded]
        if earlier != path:
            raise ArchiveError(f"{shown}: {ascii(path)} and {ascii(earlier)} differ only in "
                               "letter case (or Unicode form); on a case-insensitive disk they "
                               "would be one, so an archive may not hold both")
        if earlier_is_dir != is_dir:
            raise ArchiveError(f"{shown}: {ascii(path)} is both a file and a folder in the "
                               "archive")
        if listed and earlier_listed:
            raise ArchiveError(f"{shown} appears twice in the archive")
        self.seen[folded] = (path, is_dir, listed or earlier_listed)


# ---- bytes out -------------------------------------------------------------------------------

class _Budget:
    """Counts members and the bytes that come out against the limits."""

    def __init__(self, limits: UnpackLimits, archive_bytes: int) -> None:
        self.limits = limits
        self.archive_bytes = archive_bytes
        self.members = 0
        self.declared = 0
        self.total = 0

    def member(self) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise ArchiveError(f"the archive holds more than {self.limits.max_members:,} members "
                               f"(files and folders); a bot may have at most "
                               f"{self.limits.max_members:,}")

    def declare(self, name: str, size: int) -> None:
        """A file's declared size, judged before a byte of it is read."""
        limits = self.limits
        if size > limits.max_file_bytes:
            raise ArchiveError(f"archive member {ascii(name)} is {size:,} bytes, over the "
                               f"{limits.max_file_bytes:,} bytes a bot file may have")
        self.declared += size
        if self.declared > limits.max_total_bytes:
            raise ArchiveError(f"the archive's files come to more than "
                               f"{limits.max_total_bytes:,} bytes, the most a bot may have")

    def count(self, name: str, out: int, chunk: int, compressed: int | None) -> None:
        """``chunk`` more bytes of a file, ``out`` of it so far; ``compressed``:
        its compressed size, where the format says (zip)."""
        limits = self.limits
        shown = f"archive member {ascii(name)}"
        if out > limits.max_file_bytes:
            raise ArchiveError(f"{shown} decompresses to more than {limits.max_file_bytes:,} "
                               "bytes, the most a bot file may have")
        self.total += chunk
        if self.total > limits.max_total_bytes:
            raise ArchiveError(f"the archive's files decompress to more than "
                               f"{limits.max_total_bytes:,} bytes, the most a bot may have")
        if compressed is not None and out > _ratio_cap(limits, compressed):
            raise ArchiveError(f"{shown} decompresses to more than {limits.max_ratio} times its "
                               f"compressed size of {compressed:,} bytes (beyond the first "
                               f"{limits.ratio_grace_bytes:,} bytes): refused as a "
                               "decompression bomb")
        if self.total > _ratio_cap(limits, self.archive_bytes):
            raise _bomb(limits, "the archive", self.archive_bytes)


def _ratio_cap(limits: UnpackLimits, compressed: int) -> int:
    return limits.max_ratio * compressed + limits.ratio_grace_bytes


def _bomb(limits: UnpackLimits, what: str, compressed: int) -> ArchiveError:
    return ArchiveError(f"{what} decompresses to more than {limits.max_ratio} times its "
                        f"{compressed:,} bytes (beyond the first {limits.ratio_grace_bytes:,} "
                        "bytes): refused as a decompression bomb")


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def _copy(source: _Readable, target: IO[bytes], name: str, budget: _Budget,
          compressed: int | None) -> None:
    """Stream one member's bytes in chunks, counting every one."""
    out = 0
    while True:
        with _reading(f"archive member {ascii(name)}"):
            chunk = source.read(CHUNK_BYTES)
        if not chunk:
            return
        out += len(chunk)
        budget.count(name, out, len(chunk), compressed)
        target.write(chunk)


# ---- writing -----------------------------------------------------------------------------

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class _Writer:
    """Makes folders and files under ``dest``, one path part at a time
    through directory descriptors, never following a link."""

    def __init__(self, dest: Path) -> None:
        self.root = os.open(dest, _DIR_FLAGS)

    def close(self) -> None:
        os.close(self.root)

    def folder(self, parts: tuple[str, ...]) -> int:
        """A descriptor of the folder ``parts`` (made where missing)."""
        current = os.dup(self.root)
        try:
            for part in parts:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=current)
                inner = os.open(part, _DIR_FLAGS, dir_fd=current)
                os.close(current)
                current = inner
        except BaseException:
            os.close(current)
            raise
        return current

    def file(self, parts: tuple[str, ...], executable: bool) -> IO[bytes]:
        mode = 0o755 if executable else 0o644
        parent = self.folder(parts[:-1])
        try:
            descriptor = os.open(parts[-1], _FILE_FLAGS, mode, dir_fd=parent)
        finally:
            os.close(parent)
        os.fchmod(descriptor, mode)  # exactly this mode, whatever the umask
        return os.fdopen(descriptor, "wb")


# ---- zip -------------------------------------------------------------------------------------

_ZIP_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
              stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


# The most a member's entry in the zip central directory needs: 46 bytes of
# fields, its name, and extra fields (timestamps, Unix ids, zip64: under 100).
CENTRAL_ENTRY_BYTES = 46 + 255 + 128


def _unpack_zip(raw: IO[bytes], writer: _Writer, budget: _Budget) -> None:
    with _reading("the zip archive"):
        _check_central_directory(raw, budget.limits)
        archive = zipfile.ZipFile(raw)
    with archive:
        members = archive.infolist()
        if len(members) > budget.limits.max_members:
            raise ArchiveError(f"the archive holds {len(members):,} members (files and folders); "
                               f"a bot may have at most {budget.limits.max_members:,}")
        names = _Names()
        planned = []
        for info in members:  # everything judged before anything is written
            budget.member()
            parts, is_dir = _zip_member(info, budget)
            if parts and parts[0] not in IGNORED_TOP_FOLDERS:
                names.claim(parts, is_dir, info.orig_filename)
                planned.append((info, parts, is_dir))
        for info, parts, is_dir in planned:
            if is_dir:
                os.close(writer.folder(parts))
                continue
            executable = bool((info.external_attr >> 16) & 0o111)
            with _reading(f"archive member {ascii(info.orig_filename)}"):
                source = archive.open(info)
            with source, writer.file(parts, executable) as target:
                _copy(source, target, info.orig_filename, budget, info.compress_size)


def _check_central_directory(raw: IO[bytes], limits: UnpackLimits) -> None:
    """Refuse a zip whose central directory says, or is big enough to hold,
    more members than allowed, before zipfile makes an object of each (an
    8 MiB directory of empty members is 95,000 of them: 50 MiB). Read as
    zipfile reads it (its _EndRecData), zip64 included."""
    end_record = getattr(zipfile, "_EndRecData", None)
    found = end_record(raw) if end_record is not None else None
    raw.seek(0)
    if not found:
        return  # zipfile says why it is not a zip
    members, size = found[4], found[5]  # _ECD_ENTRIES_TOTAL, _ECD_SIZE
    if members > limits.max_members:
        raise ArchiveError(f"the archive holds {members:,} members (files and folders); a bot "
                           f"may have at most {limits.max_members:,}")
    most = limits.max_members * CENTRAL_ENTRY_BYTES
    if size > most:
        raise ArchiveError(f"the zip's central directory is {size:,} bytes, more than the "
                           f"{most:,} that {limits.max_members:,} members (the most a bot may "
                           f"have) need: refused as malformed")


def _zip_member(info: zipfile.ZipInfo, budget: _Budget) -> tuple[tuple[str, ...], bool]:
    """A zip member's path parts and whether it is a folder, refused unless
    it is a plain, unencrypted, stored or deflated file or a folder."""
    name = info.orig_filename  # zipfile cuts .filename at a NUL
    parts = _parts_of(name, budget.limits)
    shown = f"archive member {ascii(name)}"
    is_dir = name.endswith("/")
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 where the zip was not made on Unix
    if kind in _ZIP_KINDS:
        raise ArchiveError(f"{shown} is {_ZIP_KINDS[kind]}; an archive may hold only regular "
                           "files and folders")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveError(f"{shown} is of file type {kind:#o}; an archive may hold only "
                           "regular files and folders")
    if kind == stat.S_IFDIR and not is_dir:
        raise ArchiveError(f"{shown} is marked as a folder but its name does not end in '/'")
    if kind == stat.S_IFREG and is_dir:
        raise ArchiveError(f"{shown} is marked as a file but its name ends in '/'")
    if not parts and not is_dir:
        raise ArchiveError(f"archive member {ascii(name)} is a file without a name")
    if is_dir:
        return parts, True
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{shown} is encrypted; upload the archive without a password")
    if info.compress_type not in ZIP_METHODS:
        accepted = ", ".join(f"{label} ({method})" for method, label in ZIP_METHODS.items())
        raise ArchiveError(f"{shown} is compressed with zip method {info.compress_type}; "
                           f"accepted: {accepted}")
    budget.declare(name, info.file_size)
    return parts, False


# ---- tar -------------------------------------------------------------------------------------

class _TarStream:
    """What tarfile reads ("r|": in order, never seeking back): the tar
    bytes, inflated here from the gzip stream where there is one (with its
    output bounded per call), counted as they come out. It refuses a gzip
    stream inflating past ``max_ratio`` of the compressed bytes read so far,
    and tar headers (what tarfile reads that is not a member's data) past
    HEADER_BYTES_PER_MEMBER a member."""

    def __init__(self, raw: IO[bytes], gzipped: bool, budget: _Budget) -> None:
        self.raw = raw
        self.source: _Readable = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        self.gzipped = gzipped
        self.budget = budget
        self.out = 0
        self.data = 0  # member bytes the unpacker took

    def read(self, size: int = -1) -> bytes:
        # tarfile asks for its block size; an unbounded read is never needed
        with _reading("the gzip stream" if self.gzipped else "the tar archive"):
            chunk = self.source.read(size if 0 <= size <= CHUNK_BYTES else CHUNK_BYTES)
        self.out += len(chunk)
        limits = self.budget.limits
        headers = self.out - self.data
        allowed = HEADER_BYTES_GRACE + HEADER_BYTES_PER_MEMBER * (self.budget.members + 1)
        if headers > allowed:
            raise ArchiveError(f"the archive's tar headers take more than {allowed:,} bytes "
                               f"({HEADER_BYTES_PER_MEMBER:,} a member, plus "
                               f"{HEADER_BYTES_GRACE:,}): refused as malformed")
        compressed = self.raw.tell()
        if self.gzipped and self.out > _ratio_cap(limits, compressed):
            raise _bomb(limits, "the gzip stream", compressed)
        return chunk


class _CountedMember:
    """A tar member's data, told to the stream as it is taken (so it is not
    counted as header)."""

    def __init__(self, source: IO[bytes], stream: _TarStream) -> None:
        self.source = source
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        chunk = self.source.read(size)
        self.stream.data += len(chunk)
        return chunk


_TAR_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link",
              tarfile.CHRTYPE: "a device", tarfile.BLKTYPE: "a device",
              tarfile.FIFOTYPE: "a FIFO", tarfile.GNUTYPE_SPARSE: "a sparse file"}
_TAR_FILES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)


def _unpack_tar(raw: IO[bytes], gzipped: bool, writer: _Writer, budget: _Budget) -> None:
    stream = _TarStream(raw, gzipped, budget)
    what = "the gzip-compressed tar archive" if gzipped else "the tar archive"
    with _reading(what):
        archive = tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload]
    names = _Names()
    with archive:
        while True:
            with _reading(what):
                member = archive.next()
            if member is None:
                return
            budget.member()
            parts, is_dir = _tar_member(member, budget)
            if not parts:
                continue  # the top folder itself ("." or "./")
            names.claim(parts, is_dir, member.name)
            if is_dir:
                os.close(writer.folder(parts))
                continue
            with _reading(f"archive member {ascii(member.name)}"):
                source = archive.extractfile(member)
            assert source is not None  # a regular file always has one
            with source, writer.file(parts, bool(member.mode & 0o111)) as target:
                _copy(_CountedMember(source, stream), target, member.name, budget, None)


def _tar_member(member: tarfile.TarInfo, budget: _Budget) -> tuple[tuple[str, ...], bool]:
    parts = _parts_of(member.name, budget.limits)
    shown = f"archive member {ascii(member.name)}"
    if member.isdir():
        return parts, True
    if member.type in _TAR_KINDS or member.sparse is not None:
        what = _TAR_KINDS.get(member.type, "a sparse file")
        raise ArchiveError(f"{shown} is {what}; an archive may hold only regular files and "
                           "folders")
    if member.type not in _TAR_FILES:
        raise ArchiveError(f"{shown} is a tar entry of type {ascii(member.type)}; an archive "
                           "may hold only regular files and folders")
    if not parts:
        raise ArchiveError(f"{shown} is a file without a name")
    budget.declare(member.name, member.size)
    return parts, False


# ---- the bot folder --------------------------------------------------------------------------

NO_MANIFEST = "no bot.toml at the top of the archive (or inside its single top folder)"


def _bot_folder(dest: Path) -> Path:
    """``dest`` if bot.toml is there, else its single top folder if there."""
    if _is_file(dest / "bot.toml"):
        return dest
    entries = list(os.scandir(dest))
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False):
        top = dest / entries[0].name
        if _is_file(top / "bot.toml"):
            return top
    raise ArchiveError(NO_MANIFEST)


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


# ---- a bundle of files ------------------------------------------------------------------------

def write_files(files: Iterable[object], dest: Path,
                limits: UnpackLimits = UnpackLimits()) -> None:
    """Write a bundle's files, each (relative path, executable, bytes), into
    ``dest`` (which must not exist; made 0o700). A bundle that came back
    from another machine (a validation's built files) is as hostile as an
    upload: each path is judged as an archive member's, the counts and sizes
    against ``limits``, and the files are written as unpack() writes them
    (``O_EXCL|O_NOFOLLOW``, folder by folder). ArchiveError, with ``dest``
    removed, for anything refused."""
    dest.mkdir(mode=0o700)
    try:
        writer = _Writer(dest)
        try:
            names, budget = _Names(), _Budget(limits, 0)
            for entry in files:
                relative, executable, data = _bundle_entry(entry)
                parts = _parts_of(relative, limits)
                if not parts:
                    raise ArchiveError(f"bundle file {ascii(relative)} names no file")
                budget.member()
                budget.declare(relative, len(data))
                names.claim(parts, False, relative)
                with writer.file(parts, executable) as target:
                    target.write(data)
        finally:
            writer.close()
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _bundle_entry(entry: object) -> tuple[str, bool, bytes]:
    """One (path, executable, bytes) entry, its types checked: it was unpickled."""
    if (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str)
            and isinstance(entry[1], bool) and isinstance(entry[2], bytes)):
        return entry[0], entry[1], entry[2]
    raise ArchiveError(f"a bundle entry is not (path, executable, bytes): "
                       f"{_printable(repr(entry)[:80])}")


# ---- one source file -----------------------------------------------------------------------

@dataclass(frozen=True)
class SourceLanguage:
    """How a bot of one source file in a language is built and run, as the
    starter kit of that language does it (harness/kits)."""

    label: str
    suffix: str
    protocol: str  # "msgpack" (the default, not written) or "json"
    command: tuple[str, ...]  # "{source}" stands for the file's name
    build: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()  # files the build makes, listed in ``files``


LANGUAGES = {
    # {python}: the harness's Python, with msgpack and league_sdk (the kit's SDK bot)
    "python": SourceLanguage("Python", ".py", "msgpack", ("{python}", "{source}")),
    "javascript": SourceLanguage("JavaScript", ".js", "json", ("node", "{source}")),
    # the C kit's flags
    "c": SourceLanguage("C", ".c", "json", ("./bot",),
                        ("gcc", "-O2", "-Wall", "-o", "bot", "{source}"), ("bot",)),
    # the Rust kit's Cargo.toml says edition 2021; bare rustc would take 2015
    "rust": SourceLanguage("Rust", ".rs", "json", ("./bot",),
                           ("rustc", "--edition", "2021", "-O", "-o", "bot", "{source}"),
                           ("bot",)),
}
SOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def from_source(source: Path, filename: str, language: str, name: str, dest: Path,
                max_bytes: int = 1 << 20) -> Path:
    """A fresh bot folder ``dest`` (made 0o700; it must not exist) holding
    ``source`` as ``filename`` and a bot.toml for ``language`` named
    ``name``; returns ``dest``. ArchiveError, with nothing left, if refused."""
    kit = LANGUAGES.get(language)
    if kit is None:
        raise ArchiveError(f"unknown language {ascii(language)}; one of: "
                           f"{', '.join(sorted(LANGUAGES))}")
    if not SOURCE_NAME.fullmatch(filename) or not filename.endswith(kit.suffix):
        raise ArchiveError(f"source file name {ascii(filename)} is not usable: 1 to 64 letters, "
                           f"digits, '_', '.' or '-', the first a letter or digit, ending in "
                           f"{kit.suffix!r} for {kit.label}")
    if not catalog.NAME_PATTERN.fullmatch(name):
        raise ArchiveError(f"bot name {ascii(name)} is not usable: 1 to 64 letters, digits, "
                           "'_', '.' or '-', the first a letter or digit")
    text = _source_bytes(source, max_bytes)
    dest.mkdir(mode=0o700)
    try:
        _write_new(dest / filename, text)
        _write_new(dest / "bot.toml", _manifest_text(kit, name, filename).encode())
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest


def _source_bytes(source: Path, max_bytes: int) -> bytes:
    size = source.stat().st_size
    if size > max_bytes:
        raise ArchiveError(f"the source file is {size:,} bytes, over the {max_bytes:,} bytes a "
                           "source file may have")
    with open(source, "rb") as handle:
        data = handle.read(max_bytes + 1)  # a file that grew since is not read whole
    if len(data) > max_bytes:
        raise ArchiveError(f"the source file is over the {max_bytes:,} bytes a source file may "
                           "have")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArchiveError(f"the source file is not UTF-8 text (byte {exc.start:,} is "
                           f"{data[exc.start]:#04x}); a source file is text") from None
    return data


def _manifest_text(kit: SourceLanguage, name: str, filename: str) -> str:
    """bot.toml like the kit's; json.dumps writes valid TOML basic strings
    and arrays of them."""
    def argv(template: tuple[str, ...]) -> str:
        return json.dumps([filename if part == "{source}" else part for part in template])

    lines = ["# Written by the server from one uploaded source file, like `league new`'s kit.",
             f"name = {json.dumps(name)}",
             f"description = {json.dumps(f'{kit.label} bot uploaded as one file, {filename}')}"]
    if kit.protocol != "msgpack":
        lines.append(f"protocol = {json.dumps(kit.protocol)}")
    if kit.build:
        lines.append(f"build = {argv(kit.build)}")
    lines += [f"command = {argv(kit.command)}",
              'games = "*"',
              f"files = {json.dumps([*kit.outputs, filename])}"]
    return "\n".join(lines) + "\n"


def _write_new(path: Path, data: bytes) -> None:
    descriptor = os.open(path, _FILE_FLAGS, 0o644)
    os.fchmod(descriptor, 0o644)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


# ---- the manifest ----------------------------------------------------------------------------

def load_uploaded_manifest(folder: Path, name: str) -> BotSpec:
    """The manifest of an uploaded bot in ``folder``, held to the catalog's
    rules (cwd and files inside the folder after links) and the server's: it
    names the bot ``name``, and its cwd is the folder itself."""
    folder = folder.resolve()
    if folder in catalog.REPO_MANIFEST_DIRS:  # those may reach the whole repository
        raise ArchiveError("an uploaded bot cannot stand in one of the repository's own bot "
                           "folders")
    try:
        spec = catalog.load_manifest(folder / "bot.toml")
        if not spec.build:  # a build's outputs may not exist yet: checked after the build
            spec.file_paths()  # each file inside the folder after links
    except ManifestError as exc:
        raise ArchiveError(_without_server_path(str(exc), folder)) from None
    if spec.name != name:
        raise ArchiveError(f"bot.toml names the bot {ascii(spec.name)}, but it was uploaded as "
                           f"{ascii(name)}; they must be the same")
    if spec.cwd != folder:
        cwd = os.path.relpath(spec.cwd, folder)
        raise ArchiveError(f"bot.toml (bot {ascii(name)}): field 'cwd' = {ascii(cwd)}; an "
                           "uploaded bot runs in its own folder, so cwd must be \".\" (or left "
                           "out)")
    return spec


_BARE_PATH = re.compile(r"(?<=\s)/[^\s,;'\"]*")  # an absolute path the catalog wrote, unquoted


def _without_server_path(message: str, folder: Path) -> str:
    """A catalog message without the server's paths: the upload's folder
    as the sender knows it (the top of their upload), any other path it
    names (where a cwd or link led) as outside it."""
    message = message.replace(f"{folder}/", "").replace(str(folder), ".")
    return _BARE_PATH.sub("a path outside the upload", message)
