"""Checks of what gpuconvolve-batch builds before Ray starts: command lines,
property injection, inputs and usage errors. Needs no Ray and no GStreamer:
python3 -m unittest discover -s tools/batch/tests"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from gpuconvolve_batch import inputs  # noqa: E402
from gpuconvolve_batch.jobs import (EdgeEnergy, Pipeline, UsageError,  # noqa: E402
                                    inject_properties, output_path, parse_properties)

BLUR = ("filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve name=g "
        "filter=box ! videoconvert ! vp8enc ! webmmux ! filesink location={output}")


class Properties(unittest.TestCase):
    def test_order_kept_and_later_wins(self):
        self.assertEqual(list(parse_properties(["filter=gaussian", "size=7", "filter=box"])),
                         ["size", "filter"])

    def test_refused(self):
        for bad in ("sigma", "=2", "nosuch=1", "backend=gpu"):
            with self.assertRaises(UsageError):
                parse_properties([bad])


class EdgeEnergyJob(unittest.TestCase):
    def test_backend(self):
        job = EdgeEnergy("/b/edge-energy", {})
        self.assertEqual(job.argv("/v.webm", cpu_only=True),
                         ["/b/edge-energy", "--backend=cpu", "/v.webm"])
        self.assertEqual(job.argv("/v.webm", cpu_only=False)[1], "--backend=auto")
        job = EdgeEnergy("/b/edge-energy", {"backend": "cuda"}, threshold=0.3)
        self.assertEqual(job.argv("/v.webm", cpu_only=True),
                         ["/b/edge-energy", "--backend=cuda", "--threshold=0.3", "/v.webm"])

    def test_filter_properties_refused(self):
        with self.assertRaises(UsageError):
            EdgeEnergy("/b/edge-energy", {"sigma": "2"})


class PipelineJob(unittest.TestCase):
    def test_properties_after_the_elements_own(self):
        argv = Pipeline(BLUR, {"border": "reflect"}).argv("/in put.webm", cpu_only=True)
        self.assertEqual(argv[:2], ["gst-launch-1.0", "-v"])
        i = argv.index("gpuconvolve")
        self.assertEqual(argv[i:i + 6], ["gpuconvolve", "name=g", "filter=box",
                                         "border=reflect", "backend=cpu", "!"])
        self.assertIn("location=/in put.webm", argv)
        self.assertIn("location={output}", argv)

    def test_backend_of_the_element_or_the_user_kept(self):
        tokens = ["a", "!", "gpuconvolve", "backend=cuda", "!", "b"]
        self.assertNotIn("backend=cpu", inject_properties(tokens, {}, None, cpu_only=True))
        self.assertEqual(inject_properties(tokens[:3] + ["!", "b"], {"backend": "auto"}, None,
                                           cpu_only=True)[3], "backend=auto")

    def test_every_element(self):
        tokens = "a ! gpuconvolve ! gpuconvolve filter=box ! b".split()
        out = inject_properties(tokens, {"sigma": "2"}, None, cpu_only=False)
        self.assertEqual(out, "a ! gpuconvolve sigma=2 ! gpuconvolve filter=box sigma=2 ! b"
                         .split())

    def test_caps_are_not_properties(self):
        tokens = ["gpuconvolve", "video/x-raw,format=GRAY32F", "!", "b"]
        out = inject_properties(tokens, {"size": "3"}, None, cpu_only=False)
        self.assertEqual(out[:3], ["gpuconvolve", "size=3", "video/x-raw,format=GRAY32F"])

    def test_preset(self):
        out = inject_properties(["gpuconvolve"], {"backend": "cpu"}, "sharpen", cpu_only=False)
        self.assertEqual(out, ["gpuconvolve", "@preset=sharpen", "backend=cpu"])

    def test_preset_with_filter_property_refused(self):
        # gst-launch-1.0 would load the preset last and drop sigma silently
        with self.assertRaises(UsageError):
            Pipeline(BLUR, {"sigma": "2"}, preset="blur-gaussian-5")
        with self.assertRaises(UsageError):
            inject_properties(["gpuconvolve", "@preset=x"], {"sigma": "2"}, None, False)

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
        argv = Pipeline(template, {}).argv("/v", cpu_only=False)
        self.assertIn("kernel=<1, 2, 1>", argv)
        self.assertIn("caps=video/x-raw, format=GRAY8", argv)


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


if __name__ == "__main__":
    unittest.main()
