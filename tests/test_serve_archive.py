"""Uploaded archives and source files (harness/serve/archive.py): every
attack an archive can carry is refused with a message naming it, and
nothing of a refused archive stays on disk; good uploads unpack as sent.

The archives are made here, in tmp_path, with zipfile and tarfile; what
those libraries refuse to write (a NUL in a name, an encryption flag, a
size that lies) is patched into the bytes by hand."""

from __future__ import annotations

import gzip
import io
import os
import random
import stat
import struct
import tarfile
import tracemalloc
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.proc.catalog import load_manifest
from harness.serve.archive import (
    NO_MANIFEST,
    ArchiveError,
    UnpackLimits,
    from_source,
    load_uploaded_manifest,
    unpack,
)

BOT_TOML = b'name = "alpha"\ncommand = ["{python}", "bot.py"]\ngames = "*"\n'
BOT_PY = b"import sys\nsys.exit(0)\n"
MiB = 1 << 20


# ---- making archives ---------------------------------------------------------------------------

def zip_of(tmp_path: Path, *members: tuple[str, bytes] | tuple[str, bytes, int],
           method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A zip of (name, data[, st_mode]) members, written as given."""
    path = tmp_path / "upload.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w", method) as archive:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: that is the attack
        for name, data, *mode in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            if mode:
                info.external_attr = mode[0] << 16
            archive.writestr(info, data)
    return path


def tar_info(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, mode: int = 0o644,
             linkname: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def tar_of(tmp_path: Path, *members: tuple[tarfile.TarInfo, bytes], gz: bool = False,
           fmt: int = tarfile.PAX_FORMAT) -> Path:
    path = tmp_path / ("upload.tar.gz" if gz else "upload.tar")
    with tarfile.open(path, "w:gz" if gz else "w", format=fmt) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def tar_files(tmp_path: Path, *members: tuple[str, bytes], gz: bool = False) -> Path:
    return tar_of(tmp_path, *(tar_info(name, data) for name, data in members), gz=gz)


def archive_of(kind: str, tmp_path: Path, *members: tuple[str, bytes]) -> Path:
    return zip_of(tmp_path, *members) if kind == "zip" else tar_files(tmp_path, *members,
                                                                       gz=kind == "tar.gz")


def headers(data: bytes) -> Iterator[tuple[int, int]]:
    """(offset, offset of the fields) of each local (PK\\3\\4) and central
    (PK\\1\\2) header: a central header's fields sit 2 bytes further on."""
    for signature, shift in ((b"PK\x03\x04", 0), (b"PK\x01\x02", 2)):
        start = data.find(signature)
        while start >= 0:
            yield start, start + shift
            start = data.find(signature, start + 1)


def patch_zip(path: Path, flags: int | None = None, size: int | None = None,
              replace: tuple[bytes, bytes] | None = None) -> Path:
    """Set the flag bits or the uncompressed size in every header, or
    replace bytes of a name (same length), as no zip library would write."""
    data = bytearray(path.read_bytes())
    for _, fields in headers(bytes(data)):
        if flags is not None:
            struct.pack_into("<H", data, fields + 6, flags)
        if size is not None:
            struct.pack_into("<I", data, fields + 22, size)
    if replace is not None:
        data = bytearray(bytes(data).replace(*replace))
    path.write_bytes(bytes(data))
    return path


def refused(archive: Path, dest: Path, *expected: str, limits: UnpackLimits = UnpackLimits()
            ) -> str:
    """unpack refuses with a message holding each of ``expected``, and
    leaves nothing at ``dest``."""
    with pytest.raises(ArchiveError) as caught:
        unpack(archive, dest, limits)
    message = str(caught.value)
    for part in expected:
        assert part in message, message
    assert not dest.exists()
    return message


# ---- names ---------------------------------------------------------------------------------

BAD_NAMES = [("../x", "'..' part"), ("a/../../x", "'..' part"), ("/etc/x", "absolute path"),
             ("C:\\x", "backslash"), ("C:x", "drive letter"), ("a\\b", "backslash"),
             ("a\nb", "control character"), ("a\x7fb", "control character")]


@pytest.mark.parametrize("kind", ["zip", "tar", "tar.gz"])
@pytest.mark.parametrize(("name", "problem"), BAD_NAMES, ids=[ascii(n) for n, _ in BAD_NAMES])
def test_a_member_reaching_out_of_the_folder_is_refused(tmp_path: Path, kind: str, name: str,
                                                        problem: str) -> None:
    archive = archive_of(kind, tmp_path, ("bot.toml", BOT_TOML), (name, b"evil"))
    refused(archive, tmp_path / "out", problem, ascii(name))
    assert not (tmp_path / "x").exists()


def test_a_nul_in_a_zip_name_is_refused(tmp_path: Path) -> None:
    # zipfile cuts a name at a NUL, so unpack must read the name as stored
    archive = patch_zip(zip_of(tmp_path, ("bot.toml", BOT_TOML), ("bot.pyZ.sh", b"x")),
                        replace=(b"bot.pyZ.sh", b"bot.py\0.sh"))
    refused(archive, tmp_path / "out", "NUL", "'bot.py\\x00.sh'")


def test_a_nul_in_a_tar_pax_name_is_refused(tmp_path: Path) -> None:
    info, data = tar_info("bot.py", b"x")
    info.pax_headers = {"path": "bot.py\0.sh"}
    refused(tar_of(tmp_path, tar_info("bot.toml", BOT_TOML), (info, data)), tmp_path / "out",
            "NUL")


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_a_duplicate_member_is_refused(tmp_path: Path, kind: str) -> None:
    archive = archive_of(kind, tmp_path, ("bot.toml", BOT_TOML), ("bot.py", b"a"),
                         ("bot.py", b"b"))
    refused(archive, tmp_path / "out", "'bot.py' appears twice")


@pytest.mark.parametrize(("first", "second"), [("bot.py", "Bot.py"), ("lib/a.py", "LIB/b.py"),
                                               ("caf\u00e9.py", "cafe\u0301.py")])
def test_names_that_differ_only_in_case_are_refused(tmp_path: Path, first: str,
                                                    second: str) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML), (first, b"a"), (second, b"b"))
    refused(archive, tmp_path / "out", "differ only in letter case")


def test_a_file_that_is_also_a_folder_is_refused(tmp_path: Path) -> None:
    archive = tar_files(tmp_path, ("bot.toml", BOT_TOML), ("lib", b"a"), ("lib/x.py", b"b"))
    refused(archive, tmp_path / "out", "'lib' is both a file and a folder")


def test_a_path_too_deep_or_too_long_is_refused(tmp_path: Path) -> None:
    deep = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("a/" * 16 + "x", b""))
    refused(deep, tmp_path / "deep", "17 parts deep, over the 16")
    long = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("a" * 200 + "/" + "b" * 60, b""))
    refused(long, tmp_path / "long", "261 characters, over the 255")


# ---- kinds ---------------------------------------------------------------------------------

def test_a_zip_symlink_is_refused(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML),
                     ("bot.py", b"/etc/passwd", stat.S_IFLNK | 0o777))
    refused(archive, tmp_path / "out", "'bot.py' is a symbolic link")


@pytest.mark.parametrize(("kind", "what"), [(tarfile.SYMTYPE, "a symbolic link"),
                                            (tarfile.LNKTYPE, "a hard link"),
                                            (tarfile.CHRTYPE, "a device"),
                                            (tarfile.BLKTYPE, "a device"),
                                            (tarfile.FIFOTYPE, "a FIFO")])
def test_a_tar_link_device_or_fifo_is_refused(tmp_path: Path, kind: bytes, what: str) -> None:
    archive = tar_of(tmp_path, tar_info("bot.toml", BOT_TOML),
                     tar_info("bot.py", kind=kind, linkname="/etc/passwd"))
    refused(archive, tmp_path / "out", f"'bot.py' is {what}", "only regular files and folders")


def test_an_encrypted_zip_member_is_refused(tmp_path: Path) -> None:
    archive = patch_zip(zip_of(tmp_path, ("bot.toml", BOT_TOML)), flags=0x1)
    refused(archive, tmp_path / "out", "'bot.toml' is encrypted")


def test_a_zip_compressed_with_bzip2_is_refused(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML), method=zipfile.ZIP_BZIP2)
    refused(archive, tmp_path / "out", "zip method 12", "stored (0), deflated (8)")


def test_a_nested_archive_is_kept_as_a_file(tmp_path: Path) -> None:
    inner = zip_of(tmp_path, ("weights.bin", b"\1" * 100)).read_bytes()
    (tmp_path / "upload.zip").unlink()
    folder = unpack(zip_of(tmp_path, ("bot.toml", BOT_TOML), ("data.zip", inner)),
                    tmp_path / "out")
    assert (folder / "data.zip").read_bytes() == inner
    assert sorted(p.name for p in folder.iterdir()) == ["bot.toml", "data.zip"]


@pytest.mark.parametrize("content", [b"print('hello')\n", b"BZh91AY&SY" + bytes(100),
                                     b"7z\xbc\xaf\x27\x1c" + bytes(100)])
def test_what_is_not_an_archive_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "upload.zip"  # the name says zip; the bytes decide
    path.write_bytes(content)
    refused(path, tmp_path / "out", "not an archive", "zip", "tar", "gzip")


def test_a_gzip_that_holds_no_tar_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "upload.tar.gz"
    path.write_bytes(gzip.compress(b"just text, not a tar\n" * 100))
    refused(path, tmp_path / "out", "damaged or malformed")


def test_a_truncated_zip_is_refused(tmp_path: Path) -> None:
    path = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("bot.py", BOT_PY * 100))
    path.write_bytes(path.read_bytes()[:60])
    refused(path, tmp_path / "out", "damaged or malformed")


# ---- sizes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_too_many_members_are_refused(tmp_path: Path, kind: str) -> None:
    archive = archive_of(kind, tmp_path, ("bot.toml", BOT_TOML),
                         *((f"f{i}.py", b"") for i in range(4)))
    refused(archive, tmp_path / "out", "members (files and folders); a bot may have at most 3",
            limits=UnpackLimits(max_members=3))


def test_a_zip_directory_too_big_for_its_count_is_refused(tmp_path: Path) -> None:
    """The end record says 1 member, the central directory holds 50: refused
    by its size before zipfile makes an object of each."""
    archive = zip_of(tmp_path, *((f"f{i}.py", b"") for i in range(50)))
    data = bytearray(archive.read_bytes())
    struct.pack_into("<HH", data, data.rfind(b"PK\x05\x06") + 8, 1, 1)
    archive.write_bytes(bytes(data))
    refused(archive, tmp_path / "out", "central directory is", "more than the 1,287",
            limits=UnpackLimits(max_members=3))


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_file_declared_over_the_cap_is_refused(tmp_path: Path, kind: str) -> None:
    archive = archive_of(kind, tmp_path, ("bot.toml", BOT_TOML), ("big.bin", b"\1" * 2000))
    refused(archive, tmp_path / "out", "'big.bin' is 2,000 bytes, over the 1,000",
            limits=UnpackLimits(max_file_bytes=1000))


def test_a_zip_member_that_lies_about_its_size_is_refused(tmp_path: Path) -> None:
    # the headers say 100 bytes, the deflate stream holds 5,000 (its CRC too)
    archive = patch_zip(zip_of(tmp_path, ("big.bin", bytes(5000))), size=100)
    refused(archive, tmp_path / "out", "'big.bin' is damaged or malformed",
            limits=UnpackLimits(max_file_bytes=1000))


def test_bytes_past_the_declared_size_are_counted(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Were zipfile to trust the stream over the headers, the counting
    would stop the member at the cap all the same."""
    trusting_init = zipfile.ZipExtFile.__init__

    def init(self: zipfile.ZipExtFile, *args: object, **kwargs: object) -> None:
        trusting_init(self, *args, **kwargs)  # type: ignore[call-overload]
        self._left = 1 << 40  # type: ignore[attr-defined]

    monkeypatch.setattr(zipfile.ZipExtFile, "__init__", init)
    archive = patch_zip(zip_of(tmp_path, ("bot.toml", BOT_TOML), ("big.bin", bytes(5000))),
                        size=100)
    refused(archive, tmp_path / "out", "'big.bin' decompresses to more than 1,000 bytes",
            limits=UnpackLimits(max_file_bytes=1000))


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_files_over_the_total_cap_are_refused(tmp_path: Path, kind: str) -> None:
    archive = archive_of(kind, tmp_path, ("bot.toml", BOT_TOML),
                         *((f"part{i}.bin", b"\1" * 1500) for i in range(3)))
    refused(archive, tmp_path / "out", "more than 3,000 bytes",
            limits=UnpackLimits(max_file_bytes=2000, max_total_bytes=3000))


def test_a_zip_bomb_is_refused(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("zeros.bin", bytes(4 * MiB)))
    assert archive.stat().st_size < 16 << 10  # about 1,000 to 1
    refused(archive, tmp_path / "out", "'zeros.bin' decompresses to more than 100 times",
            "decompression bomb")


def test_a_gzipped_tar_bomb_is_refused(tmp_path: Path) -> None:
    archive = tar_files(tmp_path, ("bot.toml", BOT_TOML), ("zeros.bin", bytes(20 * MiB)),
                        gz=True)
    assert archive.stat().st_size < 64 << 10
    refused(archive, tmp_path / "out", "the gzip stream decompresses to more than 100 times",
            "decompression bomb")


def test_a_tar_header_bomb_is_refused(tmp_path: Path) -> None:
    """A GNU long name of 20 MiB, which tarfile reads whole before the
    unpacker sees the member: stopped while it is read."""
    archive = tar_of(tmp_path, tar_info("bot.toml", BOT_TOML), tar_info("a" * (20 * MiB), b"x"),
                     gz=True, fmt=tarfile.GNU_FORMAT)
    refused(archive, tmp_path / "out", "tar headers take more than",
            limits=UnpackLimits(max_ratio=1_000_000))


def test_an_archive_over_the_upload_cap_is_refused(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("noise.bin", random.Random(1).randbytes(2000)))
    size = archive.stat().st_size
    refused(archive, tmp_path / "out", f"{size:,} bytes, over the 1,000 bytes",
            limits=UnpackLimits(max_archive_bytes=1000))


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_memory_stays_bounded_by_the_chunk_not_the_archive(tmp_path: Path, kind: str) -> None:
    """60 MiB of zeros (two files of 30 MiB) unpack holding a few chunks at
    a time: tracemalloc's peak stays far under the archive's size."""
    path = tmp_path / f"zeros.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("bot.toml", BOT_TOML)
            for name in ("a.bin", "b.bin"):
                with archive.open(name, "w") as member:
                    for _ in range(30):
                        member.write(bytes(MiB))
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name, data in (("bot.toml", BOT_TOML), ("a.bin", None), ("b.bin", None)):
                info = tarfile.TarInfo(name)
                info.size = len(data) if data is not None else 30 * MiB
                archive.addfile(info, io.BytesIO(data) if data is not None else Zeros(30 * MiB))
    tracemalloc.start()
    try:
        folder = unpack(path, tmp_path / "out", UnpackLimits(max_ratio=1_000_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"{kind}: 60 MiB of zeros from {path.stat().st_size:,} bytes, "
          f"tracemalloc peak {peak / MiB:.2f} MiB")
    assert (folder / "a.bin").stat().st_size == (folder / "b.bin").stat().st_size == 30 * MiB
    assert peak < 8 * MiB


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read in pieces (the test's own memory stays low)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


# ---- what comes out ----------------------------------------------------------------------

def test_a_zip_of_the_folder_itself_gives_that_folder(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("alpha/", b""), ("alpha/bot.toml", BOT_TOML),
                     ("alpha/bot.py", BOT_PY), ("alpha/lib/util.py", b"X = 1\n"),
                     ("__MACOSX/alpha/._bot.py", b"\0\5\26\7"))
    dest = tmp_path / "out"
    folder = unpack(archive, dest)
    assert folder == dest / "alpha"
    assert sorted(p.name for p in dest.iterdir()) == ["alpha"]  # __MACOSX left out
    assert (folder / "lib" / "util.py").read_bytes() == b"X = 1\n"
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "bot.py").stat().st_mode) == 0o644
    assert load_uploaded_manifest(folder, "alpha").name == "alpha"


def test_a_zip_of_the_folders_contents_gives_dest(tmp_path: Path) -> None:
    archive = zip_of(tmp_path, ("bot.toml", BOT_TOML), ("bot.py", BOT_PY),
                     ("run.sh", b"#!/bin/sh\n", stat.S_IFREG | 0o755))
    umask = os.umask(0o077)  # the modes are the archive's, whatever the server's umask
    try:
        folder = unpack(archive, tmp_path / "out")
    finally:
        os.umask(umask)
    assert folder == tmp_path / "out"
    assert (folder / "bot.py").read_bytes() == BOT_PY
    assert stat.S_IMODE((folder / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "bot.toml").stat().st_mode) == 0o644


@pytest.mark.parametrize("gz", [False, True])
def test_a_tar_made_with_dot_slash_names_unpacks_with_modes(tmp_path: Path, gz: bool) -> None:
    # what `tar czf bot.tgz .` writes: "./" first, then "./name"
    archive = tar_of(tmp_path, tar_info(".", kind=tarfile.DIRTYPE, mode=0o755),
                     tar_info("./bot.toml", BOT_TOML), tar_info("./bot.py", BOT_PY, mode=0o600),
                     tar_info("./bin", kind=tarfile.DIRTYPE, mode=0o700),
                     tar_info("./bin/run", b"#!/bin/sh\n", mode=0o700), gz=gz)
    folder = unpack(archive, tmp_path / "out")
    assert folder == tmp_path / "out"
    assert (folder / "bot.toml").read_bytes() == BOT_TOML
    assert stat.S_IMODE((folder / "bot.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((folder / "bin" / "run").stat().st_mode) == 0o755


@pytest.mark.parametrize("members", [[("bot.py", BOT_PY)],
                                     [("a/bot.toml", BOT_TOML), ("b/bot.toml", BOT_TOML)],
                                     [("a/b/bot.toml", BOT_TOML)]])
def test_an_archive_without_bot_toml_on_top_is_refused(tmp_path: Path,
                                                       members: list[tuple[str, bytes]]) -> None:
    refused(zip_of(tmp_path, *members), tmp_path / "out", NO_MANIFEST)


def test_an_existing_dest_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "keep").write_text("mine")
    with pytest.raises(FileExistsError):
        unpack(zip_of(tmp_path, ("bot.toml", BOT_TOML)), dest)
    assert (dest / "keep").read_text() == "mine"


# ---- the manifest ----------------------------------------------------------------------------

def bot_folder(tmp_path: Path, body: str, name: str = "alpha") -> Path:
    folder = tmp_path / "upload"
    folder.mkdir()
    (folder / "bot.py").write_bytes(BOT_PY)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\n'
                                     f'games = "*"\n{body}')
    return folder


@pytest.mark.parametrize(("body", "problem"), [
    ('files = ["../x"]\n', "reaches outside"),
    ('cwd = ".."\n', "outside the folder"),
    ('cwd = "lib"\n', "cwd must be"),
    ('unknown = 1\n', "unknown key"),
])
def test_a_manifest_breaking_the_rules_is_refused(tmp_path: Path, body: str,
                                                  problem: str) -> None:
    folder = bot_folder(tmp_path, body)
    (folder / "lib").mkdir()
    (folder / "lib" / "bot.py").write_bytes(BOT_PY)
    with pytest.raises(ArchiveError) as caught:
        load_uploaded_manifest(folder, "alpha")
    assert problem in str(caught.value)
    assert str(tmp_path) not in str(caught.value)  # no server path in what the sender sees


def test_a_manifest_naming_another_bot_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="names the bot 'beta', but it was uploaded as 'alpha'"):
        load_uploaded_manifest(bot_folder(tmp_path, "", name="beta"), "alpha")


def test_a_symlink_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, 'files = ["bot.py", "secret.txt"]\n')
    outside = tmp_path / "server-secret.txt"
    outside.write_text("key")
    (folder / "secret.txt").symlink_to(outside)
    with pytest.raises(ArchiveError, match="lies outside the bot's directory"):
        load_uploaded_manifest(folder, "alpha")


# ---- one source file -------------------------------------------------------------------------

@pytest.mark.parametrize(("language", "filename", "protocol", "command", "build"), [
    ("python", "bot.py", "msgpack", ("{python}", "bot.py"), ()),
    ("javascript", "my-bot.js", "json", ("node", "my-bot.js"), ()),
    ("c", "bot.c", "json", ("./bot",), ("gcc", "-O2", "-Wall", "-o", "bot", "bot.c")),
    ("rust", "main.rs", "json", ("./bot",),
     ("rustc", "--edition", "2021", "-O", "-o", "bot", "main.rs")),
])
def test_one_source_file_becomes_a_bot_folder(tmp_path: Path, language: str, filename: str,
                                              protocol: str, command: tuple[str, ...],
                                              build: tuple[str, ...]) -> None:
    source = tmp_path / "upload"
    source.write_bytes(b"// a bot\n")
    folder = from_source(source, filename, language, "alpha", tmp_path / "out")
    spec = load_manifest(folder / "bot.toml")
    assert (spec.name, spec.protocol, spec.command, spec.build) == ("alpha", protocol, command,
                                                                    build)
    assert spec.cwd == folder.resolve() and spec.games is None
    assert (folder / filename).read_bytes() == b"// a bot\n"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert load_uploaded_manifest(folder, "alpha").name == "alpha"


def test_a_python_source_file_makes_a_runnable_manifest(tmp_path: Path) -> None:
    kit_bot = Path(__file__).resolve().parent.parent / "harness" / "kits" / "python" / "bot.py"
    folder = from_source(kit_bot, "bot.py", "python", "alpha", tmp_path / "out")
    spec = load_uploaded_manifest(folder, "alpha")
    assert [p.name for p in spec.file_paths()] == ["bot.py"]
    assert spec.argv()[1:] == ["bot.py"] and spec.version_hash()


@pytest.mark.parametrize(("filename", "language", "name", "problem"), [
    ("../bot.py", "python", "alpha", "is not usable"),
    ("bot.js", "python", "alpha", "ending in '.py'"),
    (".py", "python", "alpha", "is not usable"),
    ("a" * 62 + ".py", "python", "alpha", "1 to 64"),
    ("bot.py", "cobol", "alpha", "one of: c, javascript, python, rust"),
    ("bot.py", "python", 'a"b', "bot name"),
])
def test_a_bad_source_upload_is_refused(tmp_path: Path, filename: str, language: str, name: str,
                                        problem: str) -> None:
    source = tmp_path / "upload"
    source.write_bytes(b"pass\n")
    with pytest.raises(ArchiveError) as caught:
        from_source(source, filename, language, name, tmp_path / "out")
    assert problem in str(caught.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("content", "problem"), [(b"x" * 101, "101 bytes, over the 100"),
                                                  (b"\xff\xfe bad", "not UTF-8 text")])
def test_a_source_file_too_big_or_not_text_is_refused(tmp_path: Path, content: bytes,
                                                      problem: str) -> None:
    source = tmp_path / "upload"
    source.write_bytes(content)
    with pytest.raises(ArchiveError, match=problem):
        from_source(source, "bot.py", "python", "alpha", tmp_path / "out", max_bytes=100)
    assert not (tmp_path / "out").exists()

