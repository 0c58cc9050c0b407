"""Progress: an actor that the tasks tell what they do, and the line the
driver draws from it on stderr."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import ray


@ray.remote(num_cpus=0)
class Progress:
    """Per file (by job index): attempts started, where the last one runs,
    its frames so far, and why earlier attempts failed. A retry starts the
    count of frames again."""

    def __init__(self) -> None:
        self.attempts: dict[int, int] = {}
        self.places: dict[int, dict[str, Any]] = {}
        self.counts: dict[int, int] = {}
        self.errors: dict[int, dict[int, str]] = {}

    def started(self, index: int, place: dict[str, Any]) -> int:
        self.attempts[index] = self.attempts.get(index, 0) + 1
        self.places[index] = place
        self.counts[index] = 0
        return self.attempts[index]

    def frames(self, index: int, count: int) -> None:
        self.counts[index] = count

    def failed(self, index: int, attempt: int, error: str) -> None:
        self.errors.setdefault(index, {})[attempt] = error

    def snapshot(self) -> dict[str, dict]:
        return {"attempts": dict(self.attempts), "places": dict(self.places),
                "frames": dict(self.counts),
                "errors": {i: dict(e) for i, e in self.errors.items()}}


class ProgressLine:
    """On a terminal, one line redrawn in place; elsewhere (a CI log), one
    line each time a file ends."""
    WIDTH = 24

    def __init__(self, total: int, counts_frames: bool, stream: TextIO = sys.stderr,
                 enabled: bool = True) -> None:
        self.total = total
        self.counts_frames = counts_frames
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.shown = False

    def update(self, finished: int, failed: int, running: int, queued: int, frames: int,
               file_ended: bool) -> None:
        if not self.enabled or not (self.tty or file_ended):
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        filled = self.WIDTH * finished // self.total if self.total else self.WIDTH
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        text = (f"[{bar}] {finished}/{self.total} files"
                f"{f' ({failed} failed)' if failed else ''}, {running} running"
                f"{f', {queued} queued' if queued else ''}")
        if self.counts_frames:
            text += f", {frames} frames, {frames / elapsed:.1f} frames/s"
        if self.tty:
            self.stream.write("\r\033[K" + text)
            self.shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own above the progress line."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.shown = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
