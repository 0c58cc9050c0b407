# SPDX-License-Identifier: LGPL-2.1-or-later
"""The files of a batch, from paths, globs and lists, the output directory
and the report's path; every problem is a UsageError that names what is
wrong. Files are told apart by what they are (files.key), so that no link
or mount between an output and an input hides that they are one file."""
from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
import sys
import tempfile
from typing import Mapping

from .files import FileKey, key, shown
from .jobs import UsageError

_GLOB_CHARS = frozenset("*?[")


def expand_inputs(arguments: list[str], list_files: list[str],
                  null_separated: bool = False, output_dir: str | None = None) -> list[str]:
    """Absolute paths of the files to process, without duplicates, in the
    order given: arguments (paths or globs), then the lists' entries. A
    glob takes no file in `output_dir` (the outputs of an earlier run
    where the output folder lies under the inputs' glob)."""
    candidates: list[tuple[str, str]] = []   # (path, where it came from)
    outputs_key = key(output_dir) if output_dir else None
    for argument in arguments:
        candidates += [(p, argument) for p in _expand_argument(argument, outputs_key)]
    for list_file in list_files:
        candidates += _read_list(list_file, b"\0" if null_separated else b"\n")
    if not candidates:
        raise UsageError("no input files: give video files, globs or --input-list FILE")

    paths: list[str] = []
    seen: set[str] = set()
    missing: list[str] = []
    not_regular: list[str] = []
    for path, origin in candidates:
        absolute = os.path.abspath(path)
        if absolute in seen:
            continue
        seen.add(absolute)
        named = shown(path) if origin == path else f"{shown(path)} ({shown(origin)})"
        try:
            mode = os.stat(absolute).st_mode
        except OSError:
            missing.append(named + (" (a broken symbolic link)"
                                    if os.path.islink(absolute) else ""))
            continue
        if stat.S_ISDIR(mode):
            raise UsageError(f"{shown(origin)}: {shown(path)} is a directory (give a glob such "
                             f"as {shown(os.path.join(path, '*.webm'))})")
        if not stat.S_ISREG(mode):
            not_regular.append(named)
            continue
        paths.append(absolute)
    for problem, found in (("no such file", missing), ("not a regular file", not_regular)):
        if found:
            more = f" and {len(found) - 5} more" if len(found) > 5 else ""
            raise UsageError(f"{problem}: {', '.join(found[:5])}{more}")
    return paths


def _expand_argument(argument: str, outputs_key: FileKey | None) -> list[str]:
    # An existing file is taken as it is, even with glob characters in its name.
    if not is_glob(argument):
        return [argument]
    matches = sorted(glob.glob(argument, recursive=True))
    files = [m for m in matches if os.path.isfile(m)]
    if not files:
        raise UsageError(f"no file matches {shown(argument)}")
    if outputs_key is not None:
        files = [m for m in files if key(os.path.dirname(os.path.abspath(m))) != outputs_key]
        if not files:
            raise UsageError(f"no file matches {shown(argument)} outside the output folder")
    return files


def _read_list(list_file: str, separator: bytes) -> list[tuple[str, str]]:
    """Entries of a list: one path a line, the whole line but its newline
    (or, with --null, each up to a NUL byte); empty entries, and lines
    starting with # in a list of lines, are skipped. Relative paths are
    relative to the current directory, as for the arguments. '-' reads
    standard input. The bytes are the path's, whatever their encoding."""
    try:
        if list_file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(list_file, "rb") as f:
                data = f.read()
    except OSError as e:
        raise UsageError(f"--input-list {shown(list_file)}: {e.strerror}") from None
    entries = []
    for number, raw in enumerate(data.split(separator), 1):
        path = os.fsdecode(raw)
        if path and not (separator == b"\n" and path.startswith("#")):
            entries.append((path, f"{list_file}:{number}"))
    return entries


def prepare_output_dir(path: str) -> str:
    """The output directory, made when missing and checked writable."""
    absolute = os.path.abspath(path)
    what = f"--output-dir {shown(path)}"
    if os.path.exists(absolute) and not os.path.isdir(absolute):
        raise UsageError(f"{what}: not a directory")
    try:
        os.makedirs(absolute, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{what}: cannot make it: {e.strerror}") from None
    check_writable(absolute, what)
    return absolute


def check_writable(directory: str, what: str) -> None:
    # Writing a file is the only check that sees read-only mounts and ACLs.
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".gpuconvolve-batch-check-"):
            pass
    except OSError as e:
        raise UsageError(f"{what}: cannot write there: {e.strerror}") from None


def check_unique_outputs(pairs: list[tuple[str, str]]) -> None:
    """Two inputs with the same name would write the same output."""
    first: dict[str, str] = {}
    for input_path, output in pairs:
        if output in first:
            raise UsageError(f"{shown(first[output])} and {shown(input_path)} would both write "
                             f"{shown(output)}; run them in separate batches (separate "
                             "--output-dir)")
        first[output] = input_path


def check_outputs(pairs: list[tuple[str, str]], inputs: Mapping[FileKey, str]) -> None:
    """An output that exists must be a file the batch may replace: not an
    input (through a link, a hard link or a mount, whatever its path), and
    a regular file. With --resume too: such an output is never "done"."""
    for input_path, output in pairs:
        try:
            st = os.stat(output)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise UsageError(f"the output {shown(output)} of {shown(input_path)}: "
                             f"{e.strerror}") from None
        same = inputs.get((st.st_dev, st.st_ino))
        if same is not None:
            raise UsageError(f"the output {shown(output)} of {shown(input_path)} is the input "
                             f"{shown(same)} (the same file, through a link or a mount): "
                             "it would be written over; give another --output-dir or --suffix")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"the output {shown(output)} of {shown(input_path)} exists and "
                             "is not a regular file")


def is_glob(argument: str) -> bool:
    """An argument read as a glob (an existing file is taken as it is)."""
    return bool(_GLOB_CHARS & set(argument)) and not os.path.lexists(argument)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the glob `pattern` (as _expand_argument reads it: `**` any
    folders, a wildcard never a leading dot) matches the absolute `path`,
    whether or not that file exists."""
    def match(parts: list[str], names: list[str]) -> bool:
        if not parts:
            return not names
        if parts[0] == "**":
            return any(match(parts[1:], names[i:]) for i in range(len(names) + 1)
                       if not any(n.startswith(".") for n in names[:i]))
        return bool(names) and (not names[0].startswith(".") or parts[0].startswith(".")) \
            and fnmatch.fnmatchcase(names[0], parts[0]) and match(parts[1:], names[1:])
    parts = os.path.abspath(pattern).split(os.sep)[1:]
    return match(parts, path.split(os.sep)[1:])


# How every report of gpuconvolve-batch begins (json.dump of a dict whose
# first key is "version"): a file that does not is no report to replace.
_REPORT_START = re.compile(rb'\A\s*\{\s*"version"\s*:')


def _is_report(path: str) -> bool:
    with open(path, "rb") as f:
        head = f.read(256)
    return not head or _REPORT_START.match(head) is not None


def check_report(given: str, output_dir: str, outputs: list[str],
                 inputs: Mapping[FileKey, str], patterns: list[str] = []) -> str:
    """The report's absolute path, where a file can be written that is
    neither an input nor an output, that no input glob matches (a later
    batch would read it as an input), and that holds no file but an
    earlier report (`--report dir/*.webm` expanded by the shell names a
    video that is no input)."""
    path = os.path.abspath(given)
    what = f"--report {shown(given)}"
    if os.path.isdir(path):
        raise UsageError(f"{what} is a directory; give a file name")
    same = inputs.get(key(path))
    if same is not None:
        raise UsageError(f"{what} is the input {shown(same)}: the report would replace it")
    folder = key(os.path.dirname(path))
    in_outputs = folder is not None and folder == key(output_dir)   # (globs skip those)
    for pattern in patterns:
        if not in_outputs and glob_matches(pattern, path):
            raise UsageError(f"{what} is matched by the input glob {shown(pattern)}: the "
                             "report would be an input of the next batch; give another "
                             "--report")
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{what} exists and is not a regular file")
    try:
        foreign = os.path.exists(path) and not _is_report(path)
    except OSError as e:
        raise UsageError(f"{what}: {e.strerror}") from None
    if foreign:
        raise UsageError(f"{what} exists and is not a report of gpuconvolve-batch: it would "
                         "be replaced; give another --report (the shell expands a glob "
                         "after --report into its files)")
    directory, name = os.path.split(path)
    if not os.path.isdir(directory):
        raise UsageError(f"{what}: no folder {shown(directory)}")
    if key(directory) == key(output_dir) and name in {os.path.basename(o) for o in outputs}:
        raise UsageError(f"{what} is also an output; give another --report")
    check_writable(directory, what)
    return path
