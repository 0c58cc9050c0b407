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

    def results(self, jobs, limit=60.0):
        """Sends every job at once; their results by id (progress replies
        skipped), and the seconds until the last came."""
        started = time.monotonic()
        for items in jobs:
            self.proc.stdin.write(serve.encode(items))
        self.proc.stdin.flush()
        timer = threading.Timer(limit, self.proc.kill)
        timer.start()
        results = {}
        try:
            while len(results) < len(jobs):
                message = serve.read_message(self.proc.stdout)
                self.assertIsNotNone(message, f"no answer within {limit:g} s")
                if serve.value(message, "reply") == "result":
                    results[serve.value(message, "id")] = serve._result(message)
        finally:
            timer.cancel()
        return results, time.monotonic() - started

    def test_files_side_by_side_in_one_process(self):
        # four files at once, each a second long at its pace, and one that
        # fails: they run together, each with its own result and output,
        # and the failure is its own
        slow = ["filesrc", "location={input}", "!", "filesink", "location={output}",
                "videotestsrc", "num-buffers=30", "!", "fakesink", "sync=true"]
        parts = {n: self.part(f"p{n}.webm") for n in range(4)}
        jobs = [[("job", "pipeline"), ("id", f"p{n}"), ("input", self.video),
                 ("output", parts[n]), ("timeout", 0),
                 *[("word", w) for w in slow]] for n in range(4)]
        jobs.append([("job", "edge-energy"), ("id", "bad"), ("input", self.garbage),
                     ("output", self.part("bad.csv")), ("timeout", 0), ("backend", "cpu")])
        jobs.append([("job", "edge-energy"), ("id", "csv"), ("input", self.video),
                     ("output", self.part("csv.csv")), ("timeout", 0), ("backend", "cpu")])
        results, seconds = self.results(jobs)
        for n in range(4):
            self.assertEqual(results[f"p{n}"].status, 0, results[f"p{n}"].log)
            self.assertGreater(results[f"p{n}"].seconds, 0.9)
            with open(self.video, "rb") as a, open(parts[n], "rb") as b:
                self.assertEqual(a.read(), b.read())
        # side by side: the four seconds of the pipelines overlap
        self.assertLess(seconds, 3.0)
        self.assertEqual(results["bad"].status, 1)
        self.assertTrue(any("edge-energy: error from" in l for l in results["bad"].log),
                        results["bad"].log)
        self.assertEqual((results["csv"].status, results["csv"].frames), (0, 300))
        # each job's output is its own
        for n in range(4):
            self.assertFalse(any("error" in l for l in results[f"p{n}"].log),
                             results[f"p{n}"].log)
        with open(os.path.join(self.root, ".csv.csv.0123abcd.part")) as f:
            self.assertEqual(len(f.readlines()), 301)
        # one process ran them all
        self.assertIsNone(self.proc.poll())


@unittest.skipUnless(HAVE_WORKER, "no gpuconvolve-batch-run (GPUCONVOLVE_BATCH_RUN)")
class Client(unittest.TestCase):
    """serve.Worker, as a worker's actor runs it: several files at once."""

    def test_a_crash_ends_every_file_running_and_says_how_many(self):
        with tempfile.TemporaryDirectory() as root:
            worker = serve.Worker(RUNNER, dict(os.environ))
            worker.wait_ready()
            slow = ["videotestsrc", "num-buffers=300", "!", "fakesink", "sync=true",
                    "filesrc", "location={input}", "!", "filesink", "location={output}"]
            lost = {}

            def run(n):
                try:
                    worker.run([("job", "pipeline"), ("id", str(n)), ("input", RUNNER),
                                ("output", os.path.join(root, str(n))), ("timeout", 0),
                                *[("word", w) for w in slow]], None, lambda frames: None)
                except serve.WorkerLost as e:
                    lost[n] = e
            threads = [threading.Thread(target=run, args=(n,)) for n in range(3)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 20
            while worker.running < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            os.kill(worker.pid, signal.SIGKILL)
            for t in threads:
                t.join(20)
            self.assertEqual(sorted(lost), [0, 1, 2])
            for e in lost.values():
                self.assertIn("killed by signal SIGKILL", str(e))
                self.assertEqual((e.shared, e.culprit), (3, None))
            self.assertFalse(worker.alive)
            with self.assertRaises(serve.WorkerLost):
                worker.run([("job", "pipeline"), ("id", "4")], None, lambda frames: None)
            worker.close()

    def test_a_job_past_its_timeout_is_the_culprit(self):
        with tempfile.TemporaryDirectory() as root:
            fifo = os.path.join(root, "fifo")
            os.mkfifo(fifo)
            worker = serve.Worker(RUNNER, dict(os.environ))
            worker.wait_ready()
            lost = {}
            jobs = {"hang": ["filesrc", "location=" + fifo, "!", "fakesink",
                             "filesrc", "location={input}", "!", "filesink",
                             "location={output}"],
                    "slow": ["videotestsrc", "num-buffers=600", "!", "fakesink", "sync=true",
                             "filesrc", "location={input}", "!", "filesink",
                             "location={output}"]}

            def run(name):
                try:
                    worker.run([("job", "pipeline"), ("id", name), ("input", RUNNER),
                                ("output", os.path.join(root, name)),
                                ("timeout", 1 if name == "hang" else 0),
                                *[("word", w) for w in jobs[name]]],
                               1 if name == "hang" else None, lambda frames: None)
                except serve.WorkerLost as e:
                    lost[name] = e
            threads = [threading.Thread(target=run, args=(n,)) for n in jobs]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            self.assertEqual((lost["hang"].culprit, lost["slow"].culprit), (True, False))
            self.assertIn("did not stop at --timeout", str(lost["hang"]))
            worker.close()

if __name__ == "__main__":
    unittest.main()
