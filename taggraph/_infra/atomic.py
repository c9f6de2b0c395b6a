"""Atomic file writes: readers see the old file or the new one, never half of it.

A write goes to a hidden temporary file beside the target (``.<name>.<random>.tmp``),
is flushed to disk, gets the permissions the process umask gives a new file, and
is renamed over the target. A crash can leave such a temporary file behind;
`remove_leftovers` deletes those of named targets when a folder is opened for writing again.
Many files written in one go skip the flush each (``durable=False``) and are made durable together by
`make_durable`, one step instead of one fsync per file. `atomic_save_arrays` writes numpy arrays as an
uncompressed .npz (never pickled), `load_arrays` reads one back refusing anything else.
A folder written beside its target (`ClaimedFolder`) is locked while it is written, so one a stopped
process left is told from one being written (`remove_abandoned`, which also deletes a lock file a stopped process
left without its folder: an flock dies with its owner, so a free lock is a stale one).
"""

from __future__ import annotations

import fnmatch
import glob
import math
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np
from filelock import FileLock, Timeout

from taggraph.errors import ConfigError, WriteError

TMP_SUFFIX = ".tmp"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _file_mode() -> int:
    """0o666 less the process umask: the mode `open()` would give a new file."""
    return 0o666 & ~_umask()


def folder_mode() -> int:
    """0o777 less the process umask: the mode `mkdir()` would give a new folder."""
    return 0o777 & ~_umask()


def atomic_write(path: Path, text: str, durable: bool = True) -> None:
    """Write `text` (UTF-8) to `path` atomically; a failure raises WriteError naming the path. `durable`: flushed
    to disk before the rename; without it the caller makes it durable later (`make_durable`)."""
    atomic_write_bytes(path, text.encode("utf-8"), durable)


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """`atomic_write` of bytes."""
    _atomic(path, lambda fh: fh.write(data), durable)


def _atomic(path: Path, write: Callable[[BinaryIO], object], durable: bool) -> None:
    """`write(file)` into a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, _file_mode())  # mkstemp creates 0600; shared run folders need the umask's mode
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def make_durable(paths: Iterable[Path]) -> None:
    """Flush files written with ``durable=False``, and their folders' entries, to disk before returning."""
    paths = list(paths)
    if not paths:
        return
    if sys.platform.startswith("linux"):
        # one sync(2) (Linux waits for it to finish) made 20,000 new 4 KB files durable in 0.12 s here, where an
        # fsync of each took 4.7 s and 16 threads fsyncing them 1.0 s; elsewhere sync(2) may return early
        os.sync()
        return
    folders = set()
    for path in paths:
        _fsync(path)
        folders.add(Path(path).parent)
    for folder in folders if os.name != "nt" else ():  # Windows cannot open a folder to flush it
        _fsync(folder)


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise WriteError(f"cannot flush {path} to disk: {exc.strerror or exc}") from exc


def atomic_save_arrays(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` to `path` as an uncompressed .npz, atomically and without pickling (object arrays are
    refused); not flushed to disk: the zip's CRC-32 of each array tells a file a crash left torn."""
    _atomic(path, lambda fh: np.savez(fh, allow_pickle=False, **arrays), durable=False)


def load_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an .npz that `atomic_save_arrays` wrote; ValueError (or OSError) for any other file: a
    member compressed or not an array, a pickled object, an array larger than its member, a torn member (CRC)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return {m.filename[:-4]: _read_member(archive, m) for m in archive.infolist()}
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> np.ndarray:
    """One stored .npy member, its header checked before anything is allocated: a store folder is untrusted."""
    if member.compress_type != zipfile.ZIP_STORED or not member.filename.endswith(".npy"):
        raise ValueError(f"{member.filename}: not a stored .npy member")
    with archive.open(member) as fh:
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        if dtype.hasobject or fortran:
            raise ValueError(f"{member.filename}: holds objects or a Fortran-ordered array")
        count = math.prod(shape)
        if count * dtype.itemsize > member.file_size:
            raise ValueError(f"{member.filename}: its header claims more data than the member holds")
        array = np.empty(count, dtype=dtype)
        if fh.readinto(memoryview(array).cast("B")) != array.nbytes or fh.read(1):  # reading to the end checks the CRC
            raise ValueError(f"{member.filename}: its data does not match its header")
        return array.reshape(shape)


_LEFTOVER = re.compile(r"\.(?P<target>.+)\.[A-Za-z0-9_]+" + re.escape(TMP_SUFFIX))  # `atomic_write`'s names


def remove_leftovers(folder: Path, targets: Iterable[str]) -> list[Path]:
    """Delete the temporary files a crashed `atomic_write` left directly in `folder` for a target whose name
    matches one of the glob patterns `targets` (e.g. "manifest.json", "*.md"); nothing else is touched."""
    gone = []
    for tmp in Path(folder).glob(f".*{TMP_SUFFIX}"):
        found = _LEFTOVER.fullmatch(tmp.name)
        if found and any(fnmatch.fnmatchcase(found["target"], t) for t in targets) and tmp.is_file() \
                and not tmp.is_symlink():
            tmp.unlink(missing_ok=True)
            gone.append(tmp)
    return gone


def hidden_prefix(target: Path) -> str:
    """".<target name>." cut to 100 bytes: how the hidden siblings of `target` begin (names stay under 255 bytes)."""
    return f".{os.fsencode(Path(target).name)[:100].decode('utf-8', 'ignore')}."


LOCK_SUFFIX = ".lock"
CLAIM_TRIES = 100  # names tried by `ClaimedFolder`: `remove_abandoned` may hold a fresh lock for a moment


class ClaimedFolder:
    """A new hidden folder beside `target`, ``.<target name>.<random>.<kind>``, locked until `release` (or the end
    of a with block, or of the process, however it ends) by a lock on the file of its name + ".lock", taken before
    the folder is made: such a folder whose lock is free was left by a process that stopped (`remove_abandoned`)."""

    def __init__(self, target: Path, kind: str):
        for _ in range(CLAIM_TRIES):
            fd, name = tempfile.mkstemp(dir=Path(target).parent, prefix=hidden_prefix(target),
                                        suffix=f".{kind}{LOCK_SUFFIX}")
            os.close(fd)
            self._lock = FileLock(name, timeout=0)
            try:
                self._lock.acquire()
                break
            except Timeout:  # taken by a sweep of stale locks before us, which deletes it: take another name
                continue
        else:
            raise WriteError(f"cannot claim a folder beside {target}: its lock files are held by others")
        self.path = Path(name.removesuffix(LOCK_SUFFIX))
        try:
            self.path.mkdir(mode=0o700)
        except OSError:
            self.release()
            raise

    def release(self) -> None:
        self._lock.release()
        Path(self._lock.lock_file).unlink(missing_ok=True)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc) -> None:
        self.release()


def remove_abandoned(target: Path, kind: str, keep: Callable[[Path], bool] = lambda folder: False) -> list[Path]:
    """Delete the `ClaimedFolder`s of `target` and `kind` that a stopped process left (their lock is free), except
    those `keep` holds to, which are returned, and their lock files left without a folder; one being written is
    never touched."""
    prefix = hidden_prefix(target)
    claimed = re.compile(re.escape(prefix) + r"[A-Za-z0-9_]+" + re.escape(f".{kind}"))
    kept = []
    for folder in sorted(Path(target).parent.glob(f"{glob.escape(prefix)}*.{kind}")):
        if not claimed.fullmatch(folder.name) or folder.is_symlink() or not folder.is_dir():
            continue
        lock = FileLock(f"{folder}{LOCK_SUFFIX}", timeout=0)
        try:
            lock.acquire()
        except Timeout:
            continue  # being written
        try:
            if keep(folder):
                kept.append(folder)
            else:
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            lock.release()
            Path(lock.lock_file).unlink(missing_ok=True)
    for path in Path(target).parent.glob(f"{glob.escape(prefix)}*.{kind}{LOCK_SUFFIX}"):
        folder = Path(str(path).removesuffix(LOCK_SUFFIX))
        if claimed.fullmatch(folder.name) and path.is_file() and not path.is_symlink() and not os.path.lexists(folder):
            lock = FileLock(str(path), timeout=0)
            try:
                lock.acquire()
            except Timeout:
                continue  # its owner lives: the folder is about to be made
            path.unlink(missing_ok=True)
            lock.release()
    return kept


NAME_MAX = 255  # bytes in one file or folder name on common file systems


def refuse_input_as_output(out: Path, inputs: Iterable[Path], command: str, option: str = "--out") -> None:
    """ConfigError when `out` is one of `command`'s input paths, lies inside one or holds one: no command
    writes where it reads (a data file overwritten by a page, a run folder replaced by its comparison, a data
    folder whose checksum a run written into it would change), --force or not."""
    target = Path(os.path.realpath(out))
    for given in inputs:
        source = Path(os.path.realpath(given))
        how = ("is" if target == source else "is inside" if target.is_relative_to(source)
               else "holds" if source.is_relative_to(target) else None)
        if how:
            raise ConfigError(f"{option} {out}: {how} {given}, an input of {command}; inputs are never outputs, "
                              f"give a path {'outside it' if how == 'is inside' else 'apart from it'}")


def check_folder(path: Path, option: str) -> Path:
    """`path` if a folder can be made or written there, checked before any work: refuses a name longer than
    NAME_MAX bytes, a file, and a nearest existing folder that cannot be written (ConfigError, WriteError
    naming `option`)."""
    path = Path(path)
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise ConfigError(f"{option} {path}: a folder name of {len(os.fsencode(part))} bytes; file systems "
                              f"allow {NAME_MAX}")
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: is a file, not a folder")
    parent = path
    while not parent.exists():
        parent = parent.parent
    try:
        if not parent.is_dir():
            raise NotADirectoryError(f"{parent} is a file")
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".taggraph-probe."))
    except OSError as exc:
        raise WriteError(f"{option} {path}: cannot write in {parent}: {exc.strerror or exc}") from None
    return path
