# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks of what gpuconvolve-batch builds before Ray starts: command lines,
property injection, inputs, outputs, the report's path, temporary outputs
and usage errors. Needs no Ray and no GStreamer (test.sh checks what the
element judges): python3 -m unittest discover -s tools/batch/tests"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import io  # noqa: E402

from gpuconvolve_batch import files, inputs, report, serve, shares  # noqa: E402
from gpuconvolve_batch.jobs import (EdgeEnergy, Job, Pipeline, UsageError,  # noqa: E402
                                    inject_properties, output_path, parse_properties)

BLUR = ("filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve name=g "
        "filter=box ! videoconvert ! vp8enc ! webmmux ! filesink location={output}")
# what the element says a preset sets (gpuconvolve-batch-run check)
PRESET_SETS = ("filter", "size", "sigma", "kernel", "border", "planes")
# a name with what once rewrote a command line: quotes, a backslash, braces,
# a newline, a tab, a leading dash, and a byte that is not UTF-8
HOSTILE = os.fsdecode(b'-a" \\ {output} {input}\n\t\xff \xc3\xbc.webm')


class Properties(unittest.TestCase):
    def test_order_kept_and_later_wins(self):
        self.assertEqual(list(parse_properties(["filter=gaussian", "size=7", "filter=box"])),
                         ["size", "filter"])

    def test_refused(self):
        # (names and values are the element's to judge: test.sh)
        for bad in ("sigma", "=2"):
            with self.assertRaises(UsageError):
                parse_properties([bad])


class EdgeEnergyJob(unittest.TestCase):
    def test_backend(self):
        job = EdgeEnergy({})
        self.assertEqual(job.options(cpu_only=True), (("backend", "cpu"),))
        self.assertEqual(job.options(cpu_only=False), (("backend", "auto"),))
        job = EdgeEnergy({"backend": "cuda"}, threshold=0.3, reduce="host")
        self.assertEqual(job.options(cpu_only=True),
                         (("backend", "cuda"), ("threshold", "0.3"), ("reduce", "host")))

    def test_paths_are_values_of_their_own(self):
        job = Job(index=3, input="/in/" + HOSTILE, output="/out/x", kind="edge-energy",
                  options=EdgeEnergy({}).options(cpu_only=True), timeout=2.5)
        self.assertEqual(job.request("/out/.x.0123abcd.part"),
                         [("job", "edge-energy"), ("id", "3"), ("input", "/in/" + HOSTILE),
                          ("output", "/out/.x.0123abcd.part"), ("timeout", 2.5),
                          ("backend", "cpu")])
        self.assertEqual(job.program, "edge-energy")

    def test_filter_properties_refused(self):
        with self.assertRaises(UsageError):
            EdgeEnergy({"sigma": "2"})
        with self.assertRaises(UsageError):
            EdgeEnergy({}, reduce="gpu")


class PipelineJob(unittest.TestCase):
    def test_properties_after_the_elements_own(self):
        words = Pipeline(BLUR, {"border": "reflect"}).words(cpu_only=True)
        i = words.index("gpuconvolve")
        self.assertEqual(words[i:i + 6], ("gpuconvolve", "name=g", "filter=box",
                                          "border=reflect", "backend=cpu", "!"))
        self.assertIn("location={input}", words)
        self.assertIn("location={output}", words)

    def test_paths_are_values_of_their_own(self):
        # the worker puts them into the properties: no path is put into the
        # description, nor scanned for {output} or {input}
        spec = Pipeline(BLUR, {})
        job = Job(index=0, input="/in/" + HOSTILE, output="/out/" + HOSTILE, kind=spec.kind,
                  options=spec.options(cpu_only=False), words=spec.words(cpu_only=False))
        temp = "/out/." + HOSTILE + ".0123abcd.part"
        request = job.request(temp)
        self.assertEqual(request[:5], [("job", "pipeline"), ("id", "0"),
                                       ("input", "/in/" + HOSTILE), ("output", temp),
                                       ("timeout", 0.0)])
        self.assertEqual(tuple(w for k, w in request[5:]), spec.words(cpu_only=False))
        self.assertTrue(all(k == "word" for k, w in request[5:]))

    def test_backend_of_the_element_or_the_user_kept(self):
        tokens = ["a", "!", "gpuconvolve", "backend=cuda", "!", "b"]
        self.assertNotIn("backend=cpu", inject_properties(tokens, {}, None, True, ()))
        self.assertEqual(inject_properties(tokens[:3] + ["!", "b"], {"backend": "auto"}, None,
                                           True, ())[3], "backend=auto")

    def test_every_element(self):
        tokens = "a ! gpuconvolve ! gpuconvolve filter=box ! b".split()
        out = inject_properties(tokens, {"sigma": "2"}, None, False, PRESET_SETS)
        self.assertEqual(out, "a ! gpuconvolve sigma=2 ! gpuconvolve filter=box sigma=2 ! b"
                         .split())

    def test_caps_are_not_properties(self):
        tokens = ["gpuconvolve", "video/x-raw,format=GRAY32F", "!", "b"]
        out = inject_properties(tokens, {"size": "3"}, None, False, PRESET_SETS)
        self.assertEqual(out[:3], ["gpuconvolve", "size=3", "video/x-raw,format=GRAY32F"])

    def test_preset(self):
        out = inject_properties(["gpuconvolve"], {"backend": "cpu"}, "sharpen", False,
                                PRESET_SETS)
        self.assertEqual(out, ["gpuconvolve", "@preset=sharpen", "backend=cpu"])

    def test_preset_with_filter_property_refused(self):
        # gst-launch-1.0 would load the preset last and drop sigma silently
        with self.assertRaises(UsageError):
            Pipeline(BLUR, {"sigma": "2"}, preset="blur-gaussian-5",
                     preset_properties=PRESET_SETS)
        with self.assertRaises(UsageError):
            inject_properties(["gpuconvolve", "@preset=x"], {"sigma": "2"}, None, False,
                              PRESET_SETS)
        # what the element says a preset leaves alone combines with it
        self.assertIn("backend=cpu", Pipeline(BLUR, {"backend": "cpu"}, preset="blur-gaussian-5",
                                              preset_properties=PRESET_SETS).words(False))

    def test_template_checks(self):
        for bad in ("", "filesrc location={input} ! fakesink",
                    "videotestsrc ! filesink location={output}", "a ! 'b"):
            with self.assertRaises(UsageError):
                Pipeline(bad, {})
        with self.assertRaises(UsageError):      # nowhere to put the property
            Pipeline("filesrc location={input} ! filesink location={output}", {"size": "3"})

    def test_quoted_words(self):
        template = ("filesrc location={input} ! gpuconvolve kernel-width=3 kernel-height=1 "
                    "'kernel=<1, 2, 1>' ! capsfilter caps=\"video/x-raw, format=GRAY8\" "
                    "! filesink location={output}")
        words = Pipeline(template, {}).words(cpu_only=False)
        self.assertIn("kernel=<1, 2, 1>", words)
        self.assertIn("caps=video/x-raw, format=GRAY8", words)


class Workers(unittest.TestCase):
    def test_one_worker_a_gpu(self):
        # one process a GPU, --files-per-gpu files side by side in it
        share = shares.share_of(8, None, 1.0, cluster_gpus=2, nodes={"a": 64})
        self.assertEqual([(w.files, w.gpus, w.cpus) for w in share.workers], [(8, 1.0, 8.0)] * 2)
        self.assertEqual((share.files, share.gpus_per_file), (16, 0.125))

    def test_gpus_per_task(self):
        share = shares.share_of(8, 0.5, 1, 2, {"a": 64})
        self.assertEqual([(w.files, w.gpus) for w in share.workers], [(2, 1.0)] * 2)
        share = shares.share_of(8, 2, 1, 4, {"a": 64})
        self.assertEqual([(w.files, w.gpus) for w in share.workers], [(1, 2.0)] * 2)

    def test_no_gpu_one_worker_a_node(self):
        # the CPU backend: a worker a node, its CPUs / --cpus-per-task files
        share = shares.share_of(8, None, 1, 0, {"n1": 2, "n2": 4})
        self.assertEqual([(w.node, w.files, w.cpus) for w in share.workers],
                         [("n1", 2, 2), ("n2", 4, 4)])
        share = shares.share_of(8, 0, 0.25, 4, {"n1": 1})
        self.assertEqual([(w.node, w.files, w.gpus) for w in share.workers], [("n1", 4, 0.0)])
        # a node too small for one file: none there
        self.assertEqual(len(shares.share_of(8, None, 4, 0, {"n1": 2, "n2": 8}).workers), 1)

    def test_fit(self):
        # the CPUs bound the files of GPU workers
        share = shares.share_of(8, None, 1, 2, {"a": 12})
        self.assertIsNotNone(shares.fit(share, 12, 100))
        self.assertEqual([w.files for w in share.workers], [6, 6])
        self.assertIsNone(shares.fit(shares.share_of(8, None, 1, 2, {"a": 16}), 16, 100))
        # no more workers than the files need, nor places in a lone one
        share = shares.share_of(8, None, 1, 2, {"a": 64})
        shares.fit(share, 64, 3)
        self.assertEqual([w.files for w in share.workers], [3])
        share = shares.share_of(8, None, 1, 0, {"n1": 1, "n2": 1})
        shares.fit(share, 2, 5)
        self.assertEqual(len(share.workers), 2)


class Protocol(unittest.TestCase):
    def test_round_trip_of_any_path(self):
        items = [("job", "edge-energy"), ("input", "/in/" + HOSTILE), ("timeout", 2.5),
                 ("word", b""), ("word", "location={input}")]
        got = serve.read_message(io.BytesIO(serve.encode(items)))
        self.assertEqual(got, [(b"job", b"edge-energy"), (b"input", os.fsencode("/in/" + HOSTILE)),
                               (b"timeout", b"2.5"), (b"word", b""),
                               (b"word", b"location={input}")])

    def test_cut_short(self):
        data = serve.encode([("reply", "result"), ("status", "0")])
        for end in (0, 3, 9, len(data) - 1):
            self.assertIsNone(serve.read_message(io.BytesIO(data[:end])))


class Totals(unittest.TestCase):
    def test_rate_over_the_files_time(self):
        records = [report.new_record(f"/in/{i}", f"/out/{i}") for i in range(3)]
        for r, (start, end, frames) in zip(records, [(100.0, 110.0, 300), (101.0, 120.0, 600),
                                                     (None, None, None)]):
            r.update(status="done" if start else "failed", started=start, ended=end,
                     frames=frames)
        workers = [{"files": 8, "starts": [{"startup_seconds": 2.0}, {"startup_seconds": 3.5}]},
                   {"files": 8, "starts": [{"startup_seconds": None}]}]
        total = report.totals(records, 60.0, counts_frames=True, workers=workers)
        self.assertEqual(total["files_seconds"], 20.0)
        self.assertEqual(total["frames_per_second"], 45.0)
        self.assertEqual((total["workers"], total["slots"], total["worker_starts"],
                          total["worker_startup_seconds"]), (2, 16, 3, 3.5))


class Cancelled(unittest.TestCase):
    def test_an_output_published_as_its_slot_stopped_is_done(self):
        with tempfile.TemporaryDirectory() as root:
            paths = [os.path.join(root, f"{n}.csv") for n in "abcd"]
            records = [report.new_record(f"/in/{n}", p) for n, p in zip("abcd", paths)]
            with open(paths[1], "w") as f:         # b: there before, untouched
                f.write("old\n")
            before = {i: files.key(p) for i, p in enumerate(paths)}
            for path in (paths[0], paths[2]):       # a, c: published during the batch
                with open(path + ".part", "w") as f:
                    f.write("frame,pts,energy,fraction\n1,0,0,0\n2,0,0,0\n")
                os.replace(path + ".part", path)
            for r in records:
                r["status"] = "cancelled"
            records[2]["status"] = "failed"
            report.settle_cancelled(records, before, counts_frames=True)
            self.assertEqual([(r["status"], r["frames"]) for r in records],
                             [("done", 2), ("cancelled", None), ("failed", None),
                              ("cancelled", None)])
            out = io.StringIO()
            report.print_summary(records, report.totals(records, 1.0, True, []), None, out)
            self.assertIn("done      a  2 frames\n", out.getvalue())


class Inputs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        for name in ("a.webm", "b.webm", "c.mkv"):
            open(os.path.join(self.root, name), "w").close()

    def tearDown(self):
        self.dir.cleanup()

    def test_globs_lists_and_duplicates(self):
        listing = os.path.join(self.root, "list.txt")
        with open(listing, "w") as f:
            f.write(f"# archive\n\n{self.root}/c.mkv\n{self.root}/a.webm\n")
        got = inputs.expand_inputs([f"{self.root}/*.webm"], [listing])
        self.assertEqual([os.path.basename(p) for p in got], ["a.webm", "b.webm", "c.mkv"])

    def test_errors_name_the_problem(self):
        cases = [([f"{self.root}/missing.webm"], [], "missing.webm"),
                 ([f"{self.root}/*.avi"], [], "*.avi"),
                 ([self.root], [], "is a directory"),
                 ([], [f"{self.root}/nolist"], "nolist"),
                 ([], [], "no input files")]
        for args, lists, text in cases:
            with self.assertRaises(UsageError) as e:
                inputs.expand_inputs(args, lists)
            self.assertIn(text, str(e.exception))

    def test_output_dir(self):
        with self.assertRaises(UsageError) as e:
            inputs.prepare_output_dir(os.path.join(self.root, "a.webm", "out"))
        self.assertIn("a.webm", str(e.exception))
        made = inputs.prepare_output_dir(os.path.join(self.root, "new", "out"))
        self.assertTrue(os.path.isdir(made))

    def test_same_output_refused(self):
        pairs = [(p, output_path("/o", p, ".csv")) for p in ("/x/a.webm", "/y/a.mkv")]
        with self.assertRaises(UsageError):
            inputs.check_unique_outputs(pairs)

    def test_list_lines_are_whole_paths(self):
        # trailing spaces, a \r and a byte that is not UTF-8 are the path's
        names = ["sp ace.webm ", "cr.webm\r", os.fsdecode(b"\xff.webm")]
        for name in names:
            open(os.path.join(self.root, name), "w").close()
        listing = os.path.join(self.root, "list.txt")
        with open(listing, "wb") as f:
            f.write(b"".join(os.fsencode(os.path.join(self.root, n)) + b"\n" for n in names))
        got = inputs.expand_inputs([], [listing])
        self.assertEqual([os.path.basename(p) for p in got], names)
        os.unlink(os.path.join(self.root, names[0]))
        with self.assertRaises(UsageError) as e:
            inputs.expand_inputs([], [listing])
        self.assertIn("no such file: " + repr(os.path.join(self.root, names[0]).encode())[1:],
                      str(e.exception))

    def test_null_separated_list(self):
        name = "new\nline.webm"
        open(os.path.join(self.root, name), "w").close()
        listing = os.path.join(self.root, "list0")
        with open(listing, "wb") as f:
            f.write(os.fsencode(os.path.join(self.root, name)) + b"\0#a.webm\0")
        with self.assertRaises(UsageError) as e:   # '#' is a path in a NUL list
            inputs.expand_inputs([], [listing], null_separated=True)
        self.assertIn("#a.webm", str(e.exception))
        with open(listing, "wb") as f:
            f.write(os.fsencode(os.path.join(self.root, name)) + b"\0")
        got = inputs.expand_inputs([], [listing], null_separated=True)
        self.assertEqual([os.path.basename(p) for p in got], [name])

    def test_not_a_regular_file(self):
        fifo = os.path.join(self.root, "fifo.webm")
        os.mkfifo(fifo)
        os.symlink("nowhere", os.path.join(self.root, "broken.webm"))
        for path, text in ((fifo, "not a regular file: " + fifo),
                           ("/dev/zero", "not a regular file: /dev/zero"),
                           (os.path.join(self.root, "broken.webm"), "broken symbolic link")):
            with self.assertRaises(UsageError) as e:
                inputs.expand_inputs([path], [])
            self.assertIn(text, str(e.exception))

    def test_output_that_is_an_input(self):
        # a folder link, a hard link: other paths, the same file
        a = os.path.join(self.root, "a.webm")
        os.symlink(self.root, os.path.join(self.root, "out"))
        os.mkdir(os.path.join(self.root, "hard"))
        os.link(a, os.path.join(self.root, "hard", "a.webm"))
        keys = files.keys([a])
        for output_dir in ("out", "hard"):
            output = output_path(os.path.join(self.root, output_dir), a, None)
            with self.assertRaises(UsageError) as e:
                inputs.check_outputs([(a, output)], keys)
            self.assertIn("is the input " + a, str(e.exception))
        inputs.check_outputs([(a, output_path(os.path.join(self.root, "out"), a, ".csv"))], keys)
        os.mkdir(os.path.join(self.root, "d.csv"))
        with self.assertRaises(UsageError) as e:
            inputs.check_outputs([(a, os.path.join(self.root, "d.csv"))], keys)
        self.assertIn("not a regular file", str(e.exception))

    def test_report_path(self):
        a = os.path.join(self.root, "a.webm")
        out = os.path.join(self.root, "out")
        os.mkdir(out)
        os.symlink(out, os.path.join(self.root, "link"))
        keys = files.keys([a])
        outputs = [os.path.join(out, "a.csv")]
        cases = [(self.root, "is a directory"), (a, "is the input"),
                 ("/dev/null", "not a regular file"),
                 (os.path.join(self.root, "link", "a.csv"), "is also an output"),
                 (os.path.join(self.root, "no", "r.json"), "no folder")]
        for path, text in cases:
            with self.assertRaises(UsageError) as e:
                inputs.check_report(path, out, outputs, keys)
            self.assertIn(text, str(e.exception))
        self.assertEqual(inputs.check_report(os.path.join(out, "r.json"), out, outputs, keys),
                         os.path.join(out, "r.json"))

    def test_globs_take_nothing_from_the_output_folder(self):
        # the output folder under the inputs' glob, with an earlier run's
        # outputs and report in it
        out = os.path.join(self.root, "out")
        os.mkdir(out)
        for name in ("a.webm", "report.json"):
            open(os.path.join(out, name), "w").close()
        found = inputs.expand_inputs([os.path.join(self.root, "**", "*")], [], output_dir=out)
        self.assertEqual([os.path.basename(p) for p in found], ["a.webm", "b.webm", "c.mkv"])
        self.assertTrue(all(os.path.dirname(p) == self.root for p in found))
        # named as it is, a file there is still an input (refused as its own output)
        self.assertEqual(inputs.expand_inputs([os.path.join(out, "a.webm")], [], output_dir=out),
                         [os.path.join(out, "a.webm")])
        with self.assertRaises(UsageError) as e:
            inputs.expand_inputs([os.path.join(out, "*.webm")], [], output_dir=out)
        self.assertIn("outside the output folder", str(e.exception))
        # its report there is no input of the next run either
        self.assertEqual(inputs.check_report(os.path.join(out, "report.json"), out, [], {},
                                             [os.path.join(self.root, "**", "*")]),
                         os.path.join(out, "report.json"))

    def test_report_that_is_no_report(self):
        # `--report dir/*.webm` expanded by the shell: the first file is no
        # input, and no report
        b = os.path.join(self.root, "b.webm")
        out = os.path.join(self.root, "out")
        with open(b, "w") as f:
            f.write("video")
        with self.assertRaises(UsageError) as e:
            inputs.check_report(b, out, [], {})
        self.assertIn(f"--report {b} exists and is not a report of gpuconvolve-batch",
                      str(e.exception))
        # an earlier report, or an empty file, is replaced
        for text in ('{\n  "version": 2,\n  "files": []\n}\n', ""):
            with open(b, "w") as f:
                f.write(text)
            self.assertEqual(inputs.check_report(b, out, [], {}), b)

    def test_report_matched_by_an_input_glob(self):
        out = os.path.join(self.root, "out")
        matched = [("*.webm", "r.webm"), ("**/*.json", "out/deep/r.json"), ("**", "r.json"),
                   ("[r]*", "r.json")]
        for pattern, name in matched:
            glob_ = os.path.join(self.root, pattern)
            with self.assertRaises(UsageError) as e:
                inputs.check_report(os.path.join(self.root, name), out, [], {}, [glob_])
            self.assertIn(f"is matched by the input glob {glob_}", str(e.exception))
        # as glob reads them: a wildcard takes no leading dot, * no folder
        for pattern, name in (("*.json", ".r.json"), ("*.json", "out/r.json"),
                              ("**/*.json", ".hidden/r.json")):
            self.assertFalse(inputs.glob_matches(os.path.join(self.root, pattern),
                                                 os.path.join(self.root, name)), pattern)

    def test_report_never_replaces_an_input(self):
        a = os.path.join(self.root, "a.webm")
        with open(a, "w") as f:
            f.write("video")
        os.link(a, os.path.join(self.root, "report.json"))
        with self.assertRaises(report.WouldReplaceInput):
            report.write_json(os.path.join(self.root, "report.json"), {}, keep=files.keys([a]))
        with open(a) as f:
            self.assertEqual(f.read(), "video")
        self.assertEqual(sorted(os.listdir(self.root)),
                         ["a.webm", "b.webm", "c.mkv", "report.json"])


class TemporaryOutputs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def test_only_those_of_attempts_over(self):
        output = os.path.join(self.root, HOSTILE)
        over, fd = files.open_part(output)
        os.close(fd)                                  # its attempt is over
        # a writer in another process holds its lock
        running = os.path.join(self.root, "." + HOSTILE + ".0123abcd.part")
        writer = subprocess.Popen(
            [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], "
             "os.O_WRONLY | os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX); print(flush=True); "
             "sys.stdin.read()", running], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        writer.stdout.readline()
        # an input with a temporary output's name, another output's, another pattern's
        an_input = os.path.join(self.root, "." + HOSTILE + ".fedcba98.part")
        others = ["." + HOSTILE + ".0123abcd.partial", ".other.webm.0123abcd.part",
                  "." + HOSTILE + ".0123abcX.part"]
        for name in [an_input] + others:
            open(os.path.join(self.root, name), "w").close()
        try:
            removed, busy = files.remove_parts(self.root, [HOSTILE], files.keys([an_input]))
            self.assertEqual((removed, busy), (1, 1))
            self.assertFalse(os.path.exists(over))
            self.assertTrue(all(os.path.exists(os.path.join(self.root, n))
                                for n in [running, an_input] + others))
        finally:
            writer.communicate(b"")
        self.assertEqual(files.remove_parts(self.root, [HOSTILE], {}), (2, 0))

    def test_shown(self):
        self.assertEqual(files.shown("/a b/c.webm"), "/a b/c.webm")
        self.assertEqual(files.shown(HOSTILE), repr(os.fsencode(HOSTILE))[1:])
        self.assertNotIn("\n", files.shown(HOSTILE))


if __name__ == "__main__":
    unittest.main()
