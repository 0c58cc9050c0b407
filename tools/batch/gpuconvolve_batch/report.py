"""The outcome of a batch: a record per file, the JSON report and the
summary a person reads."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any, Mapping, TextIO

from .files import FileKey, shown

REPORT_VERSION = 1


def new_record(input_path: str, output: str) -> dict[str, Any]:
    """A file's entry of the report, before its task ends."""
    return {"input": input_path, "output": output, "status": "pending", "frames": None,
            "seconds": None, "attempts": 0, "node": None, "gpus": [],
            "cuda_visible_devices": None, "algorithms": {}, "error": None, "log": [],
            "failed_attempts": []}


def totals(records: list[dict[str, Any]], seconds: float, task_seconds: float,
           counts_frames: bool) -> dict[str, Any]:
    """Counts by status; frames per second over the time tasks ran (from the
    first submitted to the last ended), which leaves out Ray's start."""
    count = {status: sum(r["status"] == status for r in records)
             for status in ("done", "failed", "skipped", "cancelled")}
    # pipeline jobs count no frames: None, not 0
    frames = (sum(r["frames"] or 0 for r in records if r["status"] == "done")
              if counts_frames else None)
    rate = round(frames / task_seconds, 2) if frames is not None and task_seconds > 0 else None
    return {"files": len(records), **count, "frames": frames, "seconds": round(seconds, 3),
            "task_seconds": round(task_seconds, 3), "frames_per_second": rate}


def by_node(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Files and frames of each node that ran files."""
    nodes: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["node"] and r["status"] in ("done", "failed"):
            entry = nodes.setdefault(r["node"]["id"], {**r["node"], "done": 0, "failed": 0,
                                                       "frames": 0})
            entry[r["status"]] += 1
            entry["frames"] += r["frames"] or 0
    return list(nodes.values())


class WouldReplaceInput(Exception):
    """The report's path has become an input since the batch started."""


def write_json(path: str, report: dict[str, Any], keep: Mapping[FileKey, str] = {}) -> None:
    """Written whole or not at all, like the outputs, and never over a file
    of `keep` (the inputs), checked again right before the rename."""
    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                suffix=".part")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)        # mkstemp's 0600 is for secrets
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) in keep:
            raise WouldReplaceInput(f"it is now the input {shown(keep[st.st_dev, st.st_ino])}")
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _where(r: dict[str, Any]) -> str:
    if not r["node"]:
        return ""
    gpu = ",".join(r["gpus"]) if r["gpus"] else "-"
    return f"node {r['node']['ip']} ({r['node']['hostname']}) gpu {gpu}"


def print_summary(records: list[dict[str, Any]], total: dict[str, Any], report_path: str | None,
                  stream: TextIO = sys.stdout) -> None:
    """A line per file and the totals; `report_path` None: the report was
    not written."""
    names = [shown(os.path.basename(r["input"])) for r in records]
    width = max((len(n) for n in names), default=0)
    for r, name in zip(records, names):
        name = name.ljust(width)
        status = r["status"].ljust(9) + " "
        if r["status"] == "done":
            frames = "" if r["frames"] is None else f"{r['frames']} frames, "
            print(f"{status}{name}  {frames}{r['seconds']:.1f} s, {_where(r)}"
                  f"{', attempt ' + str(r['attempts']) if r['attempts'] > 1 else ''}",
                  file=stream)
        elif r["status"] == "failed":
            print(f"{status}{name}  after {r['attempts']} attempt(s), last on {_where(r)}: "
                  f"{r['error']}", file=stream)
        else:
            print(f"{status}{name.rstrip()}", file=stream)
    rate = total["frames_per_second"]
    frames = (f"{total['frames']} frames{f' ({rate:.1f} frames/s)' if rate is not None else ''}, "
              if total["frames"] is not None else "")
    cancelled = f", {total['cancelled']} cancelled" if total["cancelled"] else ""
    where = f"report {shown(report_path)}" if report_path else "no report"
    print(f"gpuconvolve-batch: {total['files']} file{'s' if total['files'] != 1 else ''}: "
          f"{total['done']} done, {total['failed']} failed, {total['skipped']} skipped{cancelled}; "
          f"{frames}{total['seconds']:.1f} s in all; {where}", file=stream)
