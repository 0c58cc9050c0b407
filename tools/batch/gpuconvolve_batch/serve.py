# SPDX-License-Identifier: LGPL-2.1-or-later
"""The warm worker's client: one `gpuconvolve-batch-run serve` process,
started once and sent job after job (batch-serve.c has the protocol).

Messages both ways are items, key then value, each a 32-bit little-endian
length and its bytes, after a count of items. A path is sent as its bytes,
never put into text."""
from __future__ import annotations

import ctypes
import os
import re
import signal
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable

Items = list[tuple[bytes, bytes]]

READY_TIMEOUT = 300.0            # seconds a worker may take to load (nvcodec opens GPUs)
# A job stops itself at its --timeout; a worker that has not answered this
# many seconds later is killed (a state change that blocks is past any
# timeout the job could check) and started again for the next job.
TIMEOUT_GRACE = 5.0
LOG_LINES = 20                   # lines of a failed job's output kept
# the line of a job's output that says what went wrong
ERROR_LINE = re.compile(r": error from |^gpuconvolve-batch-run: error: ")


class WorkerLost(Exception):
    """The worker process ended (or broke the protocol) during a job."""


def _bytes(value: str | bytes | int | float) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return os.fsencode(value)       # a path's own bytes
    return repr(value).encode()


def encode(items: Iterable[tuple[str | bytes, str | bytes | int | float]]) -> bytes:
    flat = [_bytes(x) for pair in items for x in pair]
    out = [struct.pack("<I", len(flat))]
    for item in flat:
        out += [struct.pack("<I", len(item)), item]
    return b"".join(out)


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_message(stream: IO[bytes]) -> Items | None:
    """The next message, or None where the stream ends (or breaks off)."""
    head = _read_exact(stream, 4)
    if head is None:
        return None
    count, = struct.unpack("<I", head)
    flat = []
    for _ in range(count):
        size = _read_exact(stream, 4)
        item = _read_exact(stream, struct.unpack("<I", size)[0]) if size else None
        if item is None:
            return None
        flat.append(item)
    return list(zip(flat[0::2], flat[1::2]))


def value(items: Items, key: str, default: str | None = None) -> str | None:
    for k, v in items:
        if k == key.encode():
            return v.decode("utf-8", "replace")
    return default


@dataclass
class Result:
    """A job's answer."""
    status: int
    frames: int | None
    timed_out: bool
    seconds: float
    no_video: bool = False       # failed, and the input has streams but no video
    algorithms: dict[str, str] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn that makes the worker die with the process that started
    it (SIGKILL when its parent thread ends): a lost Ray worker must not
    leave a pipeline writing on."""
    libc = ctypes.CDLL(None, use_errno=True)      # loaded before the fork
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:                # the parent died already
            os._exit(1)
    return preexec


class Worker:
    """A `gpuconvolve-batch-run serve` process of this slot. Start-up
    (GStreamer, the registry, nvcodec, the CUDA context at the first job)
    is paid once; then job after job."""

    def __init__(self, runner: str, env: dict[str, str]) -> None:
        self.started_at = time.time()
        self._t0 = time.monotonic()
        # its own stderr between jobs (start-up messages): the jobs' go
        # into their replies
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([runner, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=env, preexec_fn=die_with_parent())
        self.pid = self.proc.pid
        self.startup_seconds: float | None = None
        self.jobs = 0

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> float:
        """Seconds it took to load; WorkerLost where it did not."""
        if self.startup_seconds is not None:
            return self.startup_seconds
        timer = threading.Timer(timeout, self.kill)
        timer.daemon = True
        timer.start()
        try:
            message = read_message(self.proc.stdout)
        finally:
            timer.cancel()
        if message is None or value(message, "reply") != "ready":
            raise WorkerLost(f"the worker did not start: {self._end_text()}")
        self.startup_seconds = round(time.monotonic() - self._t0, 3)
        return self.startup_seconds

    def run(self, request: Items, timeout: float | None,
            on_progress: Callable[[int], None]) -> Result:
        """Sends one job and waits for its result; WorkerLost where the
        worker ended first (killed, crashed, or past --timeout)."""
        self.jobs += 1
        watchdog = _Watchdog(timeout + TIMEOUT_GRACE if timeout else None, self.kill)
        try:
            self.proc.stdin.write(encode(request))
            self.proc.stdin.flush()
            while True:
                message = read_message(self.proc.stdout)
                if message is None:
                    if watchdog.fired:
                        raise WorkerLost(f"the job did not stop at --timeout {timeout:g} s; "
                                         "its worker was killed (and is started again)")
                    raise WorkerLost(f"the worker {self._end_text()}")
                kind = value(message, "reply")
                if kind == "progress":
                    on_progress(int(value(message, "frames", "0")))
                elif kind == "result":
                    return _result(message)
        except OSError:                  # (a pipe the worker closed by ending)
            raise WorkerLost(f"the worker {self._end_text()}") from None
        finally:
            watchdog.cancel()

    def _end_text(self) -> str:
        """How the process ended, with the end of its own stderr."""
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        how = (f"was killed by signal {signal.Signals(-status).name}" if status < 0
               else f"exited with status {status}")
        self._stderr.seek(0)
        lines = [l for l in self._stderr.read().decode("utf-8", "replace").splitlines()
                 if l.strip()]
        return how + (f": {lines[-1].strip()}" if lines else "")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Ends it: the end of its input, then a kill where it lingers."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
            self.proc.wait()
        self._stderr.close()


def _result(message: Items) -> Result:
    elements = [v.decode("utf-8", "replace") for k, v in message if k == b"element"]
    algorithms = [v.decode("utf-8", "replace") for k, v in message if k == b"algorithm"]
    frames = value(message, "frames")
    return Result(status=int(value(message, "status", "1")),
                  frames=int(frames) if frames is not None else None,
                  timed_out=value(message, "timed-out") == "1",
                  no_video=value(message, "no-video") == "1",
                  seconds=float(value(message, "seconds", "0")),
                  algorithms=dict(zip(elements, algorithms)),
                  log=(value(message, "log") or "").splitlines())


class _Watchdog:
    """Calls `action` once `seconds` have passed, unless cancelled first."""

    def __init__(self, seconds: float | None, action: Callable[[], None]) -> None:
        self.fired = False
        self._timer = None
        if seconds:
            def fire() -> None:
                self.fired = True
                action()
            self._timer = threading.Timer(seconds, fire)
            self._timer.daemon = True
            self._timer.start()

    def cancel(self) -> None:
        if self._timer:
            self._timer.cancel()
