# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stopping on SIGINT (Ctrl-C) and SIGTERM (kill, a scheduler's time limit).

The first signal asks the batch to stop at its next safe point: files not
done are cancelled, Ray is shut down and the report is written, and the
exit status is 128 + the signal's number (130 for SIGINT, 143 for
SIGTERM). While the arguments are checked and while Ray starts, the safe
point is their end (Ray half started would leave processes behind); a
second signal there stops them at once. A third signal quits at once,
without a report. The handler only notes the signal (and raises where a
second one stops at once), so that no cleanup is ever cut short by it."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Iterator

PROGRAM = "gpuconvolve-batch"


class Interrupted(BaseException):
    """Raised where a signal stops what runs at once. A BaseException, as
    KeyboardInterrupt is, so that no `except Exception` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def status(self) -> int:
        return 128 + self.signum


class StopSignals:
    def __init__(self) -> None:
        self.signum: int | None = None
        self.count = 0
        self._breakable = 0

    def install(self) -> None:
        """Installs the handlers (again, after a library replaced them). A
        SIGINT ignored from the start (nohup, a background job of a
        script) stays ignored."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, self._handle)

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def status(self) -> int:
        return 128 + (self.signum or 0)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else ""

    def check(self) -> None:
        """Raises Interrupted where a signal came."""
        if self.signum is not None:
            raise Interrupted(self.signum)

    @contextlib.contextmanager
    def breakable(self) -> Iterator[None]:
        """A stretch that the first signal lets finish and a second one
        stops at once (with Interrupted)."""
        self._breakable += 1
        try:
            yield
        finally:
            self._breakable -= 1

    def _handle(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.count == 1:
            self.signum = signum
            _say(f"{signal.Signals(signum).name}: stopping; files not done are cancelled, "
                 "the report follows")
        elif self.count == 2 and self._breakable:
            self._breakable = 0
            _say("stopping at once")
            raise Interrupted(self.signum or signum)
        elif self.count == 2:
            _say("already stopping; a third signal quits at once, without the report")
        else:
            _say("quitting at once")
            os._exit(self.status)


def _say(text: str) -> None:
    # os.write: the handler may run while the program itself writes to
    # sys.stderr, which Python's buffered files refuse to re-enter.
    lead = "\n" if sys.stderr.isatty() else ""
    os.write(2, f"{lead}{PROGRAM}: {text}\n".encode("utf-8", "backslashreplace"))
