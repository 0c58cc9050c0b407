"""The files of a batch, from paths, globs and lists, and the output
directory; every problem is a UsageError that names what is wrong."""
from __future__ import annotations

import glob
import os
import sys
import tempfile

from .jobs import UsageError

_GLOB_CHARS = frozenset("*?[")


def expand_inputs(arguments: list[str], list_files: list[str]) -> list[str]:
    """Absolute paths of the files to process, without duplicates, in the
    order given: arguments (paths or globs), then the lists' lines."""
    candidates: list[tuple[str, str]] = []   # (path, where it came from)
    for argument in arguments:
        candidates += [(p, argument) for p in _expand_argument(argument)]
    for list_file in list_files:
        candidates += _read_list(list_file)
    if not candidates:
        raise UsageError("no input files: give video files, globs or --input-list FILE")

    paths: list[str] = []
    seen: set[str] = set()
    missing: list[str] = []
    for path, origin in candidates:
        absolute = os.path.abspath(path)
        if absolute in seen:
            continue
        seen.add(absolute)
        if os.path.isdir(absolute):
            raise UsageError(f"{origin}: {path} is a directory (give a glob such as "
                             f"'{os.path.join(path, '*.webm')}')")
        if not os.path.isfile(absolute):
            missing.append(path if origin == path else f"{path} ({origin})")
            continue
        paths.append(absolute)
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise UsageError(f"no such file: {', '.join(missing[:5])}{more}")
    return paths


def _expand_argument(argument: str) -> list[str]:
    # An existing file is taken as it is, even with glob characters in its name.
    if os.path.exists(argument) or not _GLOB_CHARS & set(argument):
        return [argument]
    matches = sorted(glob.glob(argument, recursive=True))
    files = [m for m in matches if os.path.isfile(m)]
    if not files:
        raise UsageError(f"no file matches {argument!r}")
    return files


def _read_list(list_file: str) -> list[tuple[str, str]]:
    """Lines of a list: one path each; blank lines and lines starting with #
    are skipped; relative paths are relative to the current directory, as
    for the arguments. '-' reads standard input."""
    try:
        if list_file == "-":
            lines = sys.stdin.read().splitlines()
        else:
            with open(list_file, encoding="utf-8") as f:
                lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"--input-list {list_file}: {e.strerror}") from None
    entries = []
    for number, line in enumerate(lines, 1):
        path = line.strip()
        if path and not path.startswith("#"):
            entries.append((path, f"{list_file}:{number}"))
    return entries


def prepare_output_dir(path: str) -> str:
    """The output directory, made when missing and checked writable."""
    absolute = os.path.abspath(path)
    if os.path.exists(absolute) and not os.path.isdir(absolute):
        raise UsageError(f"--output-dir {path}: not a directory")
    try:
        os.makedirs(absolute, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--output-dir {path}: cannot make it: {e.strerror}") from None
    check_writable(absolute, f"--output-dir {path}")
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
            raise UsageError(f"{first[output]} and {input_path} would both write {output}; "
                             "run them in separate batches (separate --output-dir)")
        first[output] = input_path
