# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks of the warm worker itself (gpuconvolve-batch-run serve, spoken to
as a slot does, without Ray): how a job fails. Needs the built worker and
the plugin: $GPUCONVOLVE_BATCH_RUN and GStreamer's plugin path, as test.sh
sets them; skipped without them."""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from gpuconvolve_batch import serve  # noqa: E402

RUNNER = os.environ.get("GPUCONVOLVE_BATCH_RUN", "")
HAVE_WORKER = os.access(RUNNER, os.X_OK) and shutil.which("gst-launch-1.0") is not None


def make_clip(path: str, *elements: str) -> None:
    subprocess.run(["gst-launch-1.0", "-q", *elements, "!", "filesink", f"location={path}"],
                   check=True, stdin=subprocess.DEVNULL, timeout=60)


@unittest.skipUnless(HAVE_WORKER, "no gpuconvolve-batch-run (GPUCONVOLVE_BATCH_RUN)")
class Worker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.root = cls.dir.name
        cls.video = os.path.join(cls.root, "video.webm")
        # 300 frames: a CSV of about 11 KB
        make_clip(cls.video, "videotestsrc", "num-buffers=300", "!",
                  "video/x-raw,width=32,height=24,framerate=30/1", "!", "vp8enc", "!", "webmmux")
        cls.audio = os.path.join(cls.root, "audio.webm")
        make_clip(cls.audio, "audiotestsrc", "num-buffers=20", "!", "audioconvert", "!",
                  "vorbisenc", "!", "webmmux")
        cls.garbage = os.path.join(cls.root, "garbage.webm")
        with open(cls.garbage, "wb") as f:
            f.write(bytes(range(256)) * 40)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def setUp(self):
        # SIGXFSZ ignored, so that a write past RLIMIT_FSIZE fails (EFBIG)
        # rather than killing the worker
        self.proc = subprocess.Popen(
            [RUNNER, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, restore_signals=False,
            preexec_fn=lambda: signal.signal(signal.SIGXFSZ, signal.SIG_IGN))
        ready = serve.read_message(self.proc.stdout)
        self.assertEqual(serve.value(ready, "reply"), "ready")

    def tearDown(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()

    def job(self, *items, limit=60.0):
        """Sends a job; its result (progress replies skipped). The worker
        is killed where it has not answered within `limit` seconds."""
        self.proc.stdin.write(serve.encode(items))
        self.proc.stdin.flush()
        timer = threading.Timer(limit, self.proc.kill)
        timer.start()
        try:
            while True:
                message = serve.read_message(self.proc.stdout)
                self.assertIsNotNone(message, f"no answer within {limit:g} s")
                if serve.value(message, "reply") == "result":
                    return serve._result(message)
        finally:
            timer.cancel()

    def part(self, name):
        path = os.path.join(self.root, f".{name}.0123abcd.part")
        open(path, "wb").close()
        return path

    def test_a_write_error_fails_the_file(self):
        # as a full disk: the CSV's writes fail part of the way (a file
        # size limit of 4 KiB, EFBIG)
        part = self.part("full.csv")
        _, hard = resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, (4096, hard))
        result = self.job(("job", "edge-energy"), ("id", "1"), ("input", self.video),
                          ("output", part), ("timeout", 0), ("backend", "cpu"))
        self.assertEqual(result.status, 1, result.log)
        self.assertIn("gpuconvolve-batch-run: error: cannot write the temporary output: "
                      + os.strerror(27), result.log)        # EFBIG
        self.assertEqual(os.path.getsize(part), 4096)
        # the next job, within the limit, is done
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
        part = self.part("next.csv")
        result = self.job(("job", "edge-energy"), ("id", "2"), ("input", self.video),
                          ("output", part), ("timeout", 0), ("backend", "cpu"))
        self.assertEqual((result.status, result.frames), (0, 300), result.log)
        with open(part) as f:
            self.assertEqual(len(f.readlines()), 301)

    def test_no_video_stream(self):
        copy = ["filesrc", "location={input}", "!", "decodebin", "!", "videoconvert", "!",
                "filesink", "location={output}"]
        for n, (kind, extra, given, no_video) in enumerate([
                ("edge-energy", [("backend", "cpu")], self.audio, True),
                ("pipeline", [("word", w) for w in copy], self.audio, True),
                ("edge-energy", [("backend", "cpu")], self.garbage, False)]):
            result = self.job(("job", kind), ("id", str(n)), ("input", given),
                              ("output", self.part(f"{n}.out")), ("timeout", 0), *extra)
            self.assertEqual((result.status, result.no_video), (1, no_video),
                             (kind, given, result.log))

    def test_a_pipeline_that_never_prerolls(self):
        # the file is copied, but appsrc never feeds its fakesink: no
        # preroll, no end of stream, and no --timeout (timeout 0)
        words = ["filesrc", "location={input}", "!", "filesink", "location={output}",
                 "appsrc", "!", "fakesink"]
        started = time.monotonic()
        result = self.job(("job", "pipeline"), ("id", "1"), ("input", self.video),
                          ("output", self.part("never.webm")), ("timeout", 0), ("preroll", 1),
                          *[("word", w) for w in words], limit=20)
        self.assertEqual((result.status, result.timed_out), (1, False), result.log)
        self.assertIn("gpuconvolve-batch-run: error: the pipeline did not preroll within 1 s "
                      "(no buffer reached a sink): the file may be damaged or the description "
                      "never feeds one of its sinks", result.log)
        self.assertLess(time.monotonic() - started, 10)
        # a pipeline that prerolls runs past the preroll limit to its end
        slow = ["filesrc", "location={input}", "!", "filesink", "location={output}",
                "videotestsrc", "num-buffers=40", "!", "fakesink", "sync=true"]
        result = self.job(("job", "pipeline"), ("id", "2"), ("input", self.video),
                          ("output", self.part("slow.webm")), ("timeout", 0), ("preroll", 1),
                          *[("word", w) for w in slow], limit=20)
        self.assertEqual(result.status, 0, result.log)
        self.assertGreater(result.seconds, 1.2)


if __name__ == "__main__":
    unittest.main()
