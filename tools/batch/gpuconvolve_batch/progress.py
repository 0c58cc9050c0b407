# SPDX-License-Identifier: LGPL-2.1-or-later
"""Progress: an actor that the workers tell their files' frames, and the line the
driver draws on stderr."""
from __future__ import annotations

import sys
import time
from typing import TextIO

import ray


@ray.remote(num_cpus=0)
class Progress:
    """Frames so far of each file (by job index), as its worker reports them;
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
        self.last_phase: str | None = None

    def phase(self, text: str) -> None:
        """A start-up phase (starting Ray): the line says it until files run."""
        if not self.enabled:
            return
        self._show(f"[{'-' * self.WIDTH}] {text}")

    def update(self, finished: int, failed: int, running: int, queued: int, frames: int,
               file_ended: bool, starting: tuple[int, int] | None = None) -> None:
        """`starting`: (workers still loading, workers), while some are."""
        if not self.enabled:
            return
        phase = (f"starting workers: {starting[1] - starting[0]}/{starting[1]} ready"
                 if starting else None)
        # in a log, a line each time a file ends and each time the phase changes
        changed = phase != self.last_phase
        self.last_phase = phase
        if not (self.tty or file_ended or changed):
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        filled = self.WIDTH * finished // self.total if self.total else self.WIDTH
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        text = (f"[{bar}] {finished}/{self.total} files"
                f"{f' ({failed} failed)' if failed else ''}, {running} running"
                f"{f', {queued} queued' if queued else ''}")
        if self.counts_frames:
            text += f", {frames} frames, {frames / elapsed:.1f} frames/s"
        if phase:
            text += f"; {phase}"
        self._show(text)

    def _show(self, text: str) -> None:
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
