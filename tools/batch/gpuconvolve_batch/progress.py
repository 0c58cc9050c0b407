# SPDX-License-Identifier: LGPL-2.1-or-later
"""Progress: an actor that the slots tell their frames, and the line the
driver draws on stderr."""
from __future__ import annotations

import sys
import time
from typing import TextIO

import ray


@ray.remote(num_cpus=0)
class Progress:
    """Frames so far of each file (by job index), as its slot reports them;
    a retry starts the count again."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def frames(self, index: int, count: int) -> None:
        self.counts[index] = count

    def snapshot(self) -> dict[int, int]:
        return dict(self.counts)


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
