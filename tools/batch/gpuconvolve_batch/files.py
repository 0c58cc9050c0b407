# SPDX-License-Identifier: LGPL-2.1-or-later
"""Files as the batch sees them: paths shown in messages, files told apart
by what they are (device and inode) rather than by their paths, and the
temporary outputs (.NAME.XXXXXXXX.part) that attempts write into.

A temporary output is made anew (O_EXCL: never a file that was there) and
locked (a POSIX lock, fcntl) by the worker process for as long as its
attempt runs; the lock goes when that process ends, however it ends. So a
temporary output that can be locked is one whose attempt is over, and can
be removed, and one that cannot belongs to an attempt still running."""
from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
from typing import Iterable, Mapping

PART_SUFFIX = ".part"
_PART_RANDOM = 8                 # hex digits between the name and the suffix

FileKey = tuple[int, int]        # (st_dev, st_ino)


def shown(path: str) -> str:
    """`path` as a message shows it: as it is where it prints as itself,
    else quoted with escapes (newlines, tabs, spaces at the ends, bytes that
    are not UTF-8), so that a message stays one readable line."""
    try:
        path.encode("utf-8")
        plain = path.isprintable() and path == path.strip()
    except UnicodeEncodeError:   # bytes that are not UTF-8 (surrogateescape)
        plain = False
    return path if plain else repr(os.fsencode(path))[1:]


def key(path: str) -> FileKey | None:
    """What `path` is, through links and mounts; None where nothing is."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def keys(paths: Iterable[str]) -> dict[FileKey, str]:
    """The files of `paths` by what they are."""
    found: dict[FileKey, str] = {}
    for path in paths:
        k = key(path)
        if k is not None:
            found.setdefault(k, path)
    return found


def part_prefix(output: str) -> str:
    """Temporary outputs of `output` are PREFIX<random>.part, hidden, next to it."""
    directory, name = os.path.split(output)
    return os.path.join(directory, f".{name}.")


def open_part(output: str) -> tuple[str, int]:
    """A new temporary output of `output`, locked: its path and a file
    descriptor open for writing. The lock lasts as long as the calling
    process has the file open: closing any descriptor of it in this
    process (not only this one) ends it."""
    while True:
        path = part_prefix(output) + secrets.token_hex(_PART_RANDOM // 2) + PART_SUFFIX
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass                 # no locks on this file system: see remove_parts
        return path, fd


def _output_of_part(name: str) -> str | None:
    """The output name whose temporary output `name` is, or None."""
    if not (name.startswith(".") and name.endswith(PART_SUFFIX)):
        return None
    core = name[1:-len(PART_SUFFIX)]
    output, dot, random = core[:-_PART_RANDOM - 1], core[-_PART_RANDOM - 1], core[-_PART_RANDOM:]
    if not output or dot != "." or not all(c in "0123456789abcdef" for c in random):
        return None
    return output


def remove_parts(directory: str, output_names: Iterable[str],
                 keep: Mapping[FileKey, str]) -> tuple[int, int]:
    """Removes the temporary outputs in `directory` of the outputs named
    whose attempt is over; never a file of `keep` (the inputs). Returns
    how many it removed and how many are still being written. Where the
    file system has no locks, every one is taken as over."""
    names = set(output_names)
    removed = busy = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0, 0
    for entry in entries:
        if _output_of_part(entry.name) not in names:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in keep:
                continue
            fd = os.open(entry.path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if (os.fstat(fd).st_ino != st.st_ino):
                continue         # replaced since
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno in (errno.EACCES, errno.EAGAIN):
                    busy += 1
                    continue
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed, busy
