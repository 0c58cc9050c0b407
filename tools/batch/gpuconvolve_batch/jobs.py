# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a slot's worker runs for one file: the job sent to
`gpuconvolve-batch-run serve` (batch-serve.c), and its output path.

Two kinds of job:
- edge-energy (the default): the analysis of examples/edge-energy (linked
  into the worker), whose CSV is the output;
- pipeline: a gst-launch-1.0 description with {input} and {output}, where
  {output} is what the pipeline writes (batch-pipeline.c).

The paths are values of their own in the job, never put into other text:
a path may hold any bytes but NUL, quotes and {output} included.

Everything here is checked on the driver before Ray starts, so that a bad
argument is a usage error and not the same failure on every file.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass

INPUT = "{input}"
OUTPUT = "{output}"
RUNNER_NAME = "gpuconvolve-batch-run"

# A property on a gst-launch line: NAME=VALUE, or @preset=NAME. A caps string
# such as video/x-raw,format=GRAY8 is not one (the '/').
_ASSIGNMENT = re.compile(r"^@?[A-Za-z][A-Za-z0-9_-]*=")


class UsageError(Exception):
    """A bad argument: nothing was run."""


def parse_properties(items: list[str]) -> dict[str, str]:
    """NAME=VALUE arguments of --property, in order; a later one for the same
    name replaces the earlier. Names and values are the element's to judge
    (check_with_element)."""
    properties: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--property {item!r}: expected NAME=VALUE, for example sigma=2")
        properties.pop(name, None)
        properties[name] = value
    return properties


def check_with_element(runner: str, env: dict[str, str], properties: dict[str, str],
                       preset: str | None, words: list[str]) -> tuple[tuple[str, ...], str | None]:
    """Asks gpuconvolve-batch-run, on this machine, whether gpuconvolve takes
    the properties (names and values, set in the order given) and the
    preset, and where {input} and {output} land in the description `words`.
    Returns the properties a preset sets (from the element) and, where the
    description needs an element missing here, a note that says so."""
    argv = [runner, "check"]
    for name, value in properties.items():
        argv += ["--property", f"{name}={value}"]
    if preset is not None:
        argv += ["--preset", preset]
    if words:
        argv += ["--", *words]
    try:
        # a session of its own: a Ctrl-C is the batch's to handle
        done = subprocess.run(argv, capture_output=True, env={**os.environ, **env}, timeout=120,
                              start_new_session=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot check the job's arguments with {runner}: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    prefix = RUNNER_NAME + ": "
    lines = [line.removeprefix(prefix).removeprefix("error: ").removeprefix("note: ")
             for line in done.stderr.decode("utf-8", "backslashreplace").splitlines()
             if line.startswith(prefix)]
    if done.returncode not in (0, 3):
        raise UsageError("\n".join(lines) or f"{runner} check failed (status {done.returncode})")
    names = tuple(line.split(" ", 1)[1] for line in done.stdout.decode().splitlines()
                  if line.startswith("preset-property "))
    return names, ("\n".join(lines) if done.returncode == 3 else None)


@dataclass(frozen=True)
class Job:
    """One file's job, as sent to a slot."""
    index: int
    input: str
    output: str
    kind: str                    # "edge-energy" or "pipeline"
    # the job's settings for the worker: (key, value) pairs (batch-serve.c)
    options: tuple[tuple[str, str], ...] = ()
    words: tuple[str, ...] = ()  # pipeline: the description
    # Files the output must not be when it is renamed into place: the input,
    # and the inputs of the output's name (those a folder link or a mount
    # made during the batch could put there).
    guards: tuple[str, ...] = ()
    timeout: float | None = None
    # Test hook (GPUCONVOLVE_BATCH_TEST_KILL): the first attempt kills its own
    # slot's process mid-run, to show that a lost worker's file is retried.
    test_kill: bool = False

    @property
    def name(self) -> str:
        return os.path.basename(self.input)

    @property
    def program(self) -> str:
        """The name its messages go by."""
        return "edge-energy" if self.kind == "edge-energy" else RUNNER_NAME

    def request(self, temp: str) -> list[tuple[str, str | float]]:
        """The job for the worker, writing to `temp`: each path a value of
        its own, as it is."""
        items: list[tuple[str, str | float]] = [
            ("job", self.kind), ("id", str(self.index)), ("input", self.input),
            ("output", temp), ("timeout", self.timeout or 0.0)]
        items += self.options
        items += [("word", w) for w in self.words]
        return items


@dataclass(frozen=True)
class EdgeEnergy:
    """The per-frame edge statistics of examples/edge-energy, one CSV per
    file, computed inside the worker (the same analysis, the same bytes)."""
    properties: dict[str, str]
    threshold: float | None = None
    reduce: str | None = None
    kind = "edge-energy"
    default_suffix = ".csv"

    def __post_init__(self) -> None:
        # the analysis builds its Sobel element itself: only where it runs
        # is open to choice
        others = [name for name in self.properties if name != "backend"]
        if others:
            raise UsageError(
                f"--property {others[0]}: the edge-energy job sets its own Sobel "
                "filter and takes only --property backend=...; use --pipeline "
                "to run other filter settings")
        if self.reduce not in (None, "statistics", "host"):
            raise UsageError(f"--reduce {self.reduce}: statistics or host")

    def options(self, cpu_only: bool) -> tuple[tuple[str, str], ...]:
        backend = self.properties.get("backend", "cpu" if cpu_only else "auto")
        options = [("backend", backend)]
        if self.threshold is not None:
            options.append(("threshold", repr(self.threshold)))
        if self.reduce is not None:
            options.append(("reduce", self.reduce))
        return tuple(options)

    def words(self, cpu_only: bool) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class Pipeline:
    """A gst-launch-1.0 description run on each file by the worker.
    preset_properties: what a preset sets, as the element says
    (check_with_element)."""
    template: str
    properties: dict[str, str]
    preset: str | None = None
    preset_properties: tuple[str, ...] = ()
    kind = "pipeline"
    default_suffix = None        # the input's own

    def __post_init__(self) -> None:
        tokens = split_template(self.template)
        check_template(tokens)
        # Both variants, so that every refusal happens here.
        for cpu_only in (False, True):
            inject_properties(tokens, self.properties, self.preset, cpu_only,
                              self.preset_properties)

    def options(self, cpu_only: bool) -> tuple[tuple[str, str], ...]:
        return ()

    def words(self, cpu_only: bool) -> tuple[str, ...]:
        """The description with the properties: {input} and {output} stay
        for the worker to fill in."""
        return tuple(inject_properties(split_template(self.template), self.properties,
                                       self.preset, cpu_only, self.preset_properties))


def split_template(template: str) -> list[str]:
    """The words of a description, split as a shell splits a gst-launch-1.0
    command line; the worker gets them as separate values and joins them as
    gst-launch-1.0 does."""
    try:
        tokens = shlex.split(template)
    except ValueError as e:
        raise UsageError(f"--pipeline: {e}") from None
    if not tokens:
        raise UsageError("--pipeline is empty")
    return tokens


def check_template(tokens: list[str]) -> None:
    if not any(INPUT in t for t in tokens):
        raise UsageError(f"--pipeline has no {INPUT}: every file would run the same pipeline")
    if not any(OUTPUT in t for t in tokens):
        raise UsageError(f"--pipeline has no {OUTPUT}: the pipeline must write its result "
                         f"there (for example filesink location={OUTPUT})")


def inject_properties(tokens: list[str], properties: dict[str, str], preset: str | None,
                      cpu_only: bool, preset_properties: tuple[str, ...]) -> list[str]:
    """tokens with the properties (and @preset=) added to every gpuconvolve
    element, after the element's own so that they take precedence."""
    elements = [i for i, t in enumerate(tokens) if t == "gpuconvolve"]
    if (properties or preset) and not elements:
        raise UsageError("--pipeline has no gpuconvolve element (written as a word of "
                         "its own) for --property or --preset")
    out: list[str] = []
    start = 0
    for i in elements:
        end = i + 1
        while end < len(tokens) and _ASSIGNMENT.match(tokens[end]):
            end += 1
        own = tokens[i + 1:end]
        out += tokens[start:end] + _added(own, properties, preset, cpu_only, preset_properties)
        start = end
    return out + tokens[start:]


def _added(own: list[str], properties: dict[str, str], preset: str | None,
           cpu_only: bool, preset_properties: tuple[str, ...]) -> list[str]:
    """What one gpuconvolve element gets, given its own properties."""
    own_names = {t.partition("=")[0] for t in own}
    if preset and "@preset" in own_names:
        raise UsageError(f"--preset {preset}: the pipeline's gpuconvolve has a @preset= already")
    if preset or "@preset" in own_names:
        # gst-launch-1.0's parser loads @preset= after all the element's other
        # properties, wherever it stands, and a preset sets every filter
        # property: a filter property given with it would be silently lost.
        lost = [name for name in properties if name in preset_properties]
        if lost:
            raise UsageError(
                f"--property {lost[0]} would be overridden by the preset: gst-launch-1.0's "
                "parser loads @preset= after the other properties and a preset sets every "
                "filter property; write the preset's properties out with --property instead "
                "(docs/presets.md lists them)")
    added = [f"@preset={preset}"] if preset else []
    added += [f"{name}={value}" for name, value in properties.items()]
    # Without a GPU for the task, CUDA is not the task's to use.
    if cpu_only and "backend" not in properties and "backend" not in own_names:
        added.append("backend=cpu")
    return added


def output_path(output_dir: str, input_path: str, suffix: str | None) -> str:
    """OUTPUT_DIR/STEM+SUFFIX; the input's own suffix when none is given."""
    name = os.path.basename(input_path)
    stem, ext = os.path.splitext(name)
    return os.path.join(output_dir, stem + (ext if suffix is None else suffix))
