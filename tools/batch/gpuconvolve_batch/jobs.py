"""What the task of one file runs: its command line and its output path.

Two kinds of job:
- edge-energy (the default): the example program examples/edge-energy,
  whose CSV on stdout is the output;
- pipeline: a gst-launch-1.0 description with {input} and {output}, where
  {output} is what the pipeline writes.

Everything here is checked on the driver before Ray starts, so that a bad
argument is a usage error and not the same failure on every file.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

INPUT = "{input}"
OUTPUT = "{output}"

# gpuconvolve's properties (docs/properties.md). A preset holds the filter
# ones, the machine ones are never in a preset (docs/presets.md).
FILTER_PROPERTIES = (
    "filter", "size", "sigma", "kernel-width", "kernel-height", "kernel",
    "row-kernel", "column-kernel", "normalize", "scale", "bias", "mode",
    "anchor-x", "anchor-y", "border", "border-value", "alpha", "separable",
    "algorithm",
)
MACHINE_PROPERTIES = ("backend", "cuda-device-id", "queue-depth", "tuning-file")
BACKENDS = ("auto", "cuda", "cpu")

# A property on a gst-launch line: NAME=VALUE, or @preset=NAME. A caps string
# such as video/x-raw,format=GRAY8 is not one (the '/').
_ASSIGNMENT = re.compile(r"^@?[A-Za-z][A-Za-z0-9_-]*=")


class UsageError(Exception):
    """A bad argument: nothing was run."""


def parse_properties(items: list[str]) -> dict[str, str]:
    """NAME=VALUE arguments of --property, in order; a later one for the same
    name replaces the earlier."""
    properties: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--property {item!r}: expected NAME=VALUE, for example sigma=2")
        if name not in FILTER_PROPERTIES + MACHINE_PROPERTIES:
            raise UsageError(f"--property {item!r}: gpuconvolve has no property {name!r} "
                             "(docs/properties.md lists them)")
        if name == "backend" and value not in BACKENDS:
            raise UsageError(f"--property {item!r}: backend is one of {', '.join(BACKENDS)}")
        properties.pop(name, None)
        properties[name] = value
    return properties


@dataclass(frozen=True)
class Job:
    """One file's task, as sent to Ray."""
    index: int
    input: str
    output: str
    argv: list[str]              # OUTPUT stands for the temporary file
    kind: str                    # "edge-energy" or "pipeline"
    env: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    # Test hook (GPUCONVOLVE_BATCH_TEST_KILL): the first attempt kills its own
    # worker process mid-run, to show that a lost worker's file is retried.
    test_kill: bool = False

    @property
    def name(self) -> str:
        return os.path.basename(self.input)


@dataclass(frozen=True)
class EdgeEnergy:
    """The example program's per-frame edge statistics, one CSV per file."""
    binary: str
    properties: dict[str, str]
    threshold: float | None = None
    kind = "edge-energy"
    default_suffix = ".csv"

    def __post_init__(self) -> None:
        # edge-energy builds its two Sobel elements itself: only where they
        # run is open to choice, through its --backend.
        others = [name for name in self.properties if name != "backend"]
        if others:
            raise UsageError(
                f"--property {others[0]}: the edge-energy job sets its own Sobel "
                "filters and takes only --property backend=...; use --pipeline "
                "to run other filter settings")

    def argv(self, input_path: str, cpu_only: bool) -> list[str]:
        backend = self.properties.get("backend", "cpu" if cpu_only else "auto")
        argv = [self.binary, f"--backend={backend}"]
        if self.threshold is not None:
            argv.append(f"--threshold={self.threshold!r}")
        return argv + [input_path]


@dataclass(frozen=True)
class Pipeline:
    """A gst-launch-1.0 description run on each file."""
    template: str
    properties: dict[str, str]
    preset: str | None = None
    kind = "pipeline"
    default_suffix = None        # the input's own

    def __post_init__(self) -> None:
        tokens = split_template(self.template)
        if not any(INPUT in t for t in tokens):
            raise UsageError(f"--pipeline has no {INPUT}: every file would run the same pipeline")
        if not any(OUTPUT in t for t in tokens):
            raise UsageError(f"--pipeline has no {OUTPUT}: the pipeline must write its result "
                             f"there (for example filesink location={OUTPUT})")
        # Both variants, so that every refusal happens here.
        inject_properties(tokens, self.properties, self.preset, cpu_only=False)
        inject_properties(tokens, self.properties, self.preset, cpu_only=True)

    def argv(self, input_path: str, cpu_only: bool) -> list[str]:
        tokens = inject_properties(split_template(self.template), self.properties,
                                   self.preset, cpu_only)
        # -v prints each element's active-algorithm as it is set.
        return ["gst-launch-1.0", "-v"] + [t.replace(INPUT, input_path) for t in tokens]


def split_template(template: str) -> list[str]:
    """The words of a description, split as a shell splits a gst-launch-1.0
    command line; gst-launch-1.0 gets them as separate arguments and escapes
    the spaces inside each, as from a shell."""
    try:
        tokens = shlex.split(template)
    except ValueError as e:
        raise UsageError(f"--pipeline: {e}") from None
    if not tokens:
        raise UsageError("--pipeline is empty")
    return tokens


def inject_properties(tokens: list[str], properties: dict[str, str], preset: str | None,
                      cpu_only: bool) -> list[str]:
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
        out += tokens[start:end] + _added(own, properties, preset, cpu_only)
        start = end
    return out + tokens[start:]


def _added(own: list[str], properties: dict[str, str], preset: str | None,
           cpu_only: bool) -> list[str]:
    """What one gpuconvolve element gets, given its own properties."""
    own_names = {t.partition("=")[0] for t in own}
    if preset and "@preset" in own_names:
        raise UsageError(f"--preset {preset}: the pipeline's gpuconvolve has a @preset= already")
    if preset or "@preset" in own_names:
        # gst-launch-1.0 loads @preset= after all the element's other
        # properties, wherever it stands, and a preset sets every filter
        # property: a filter property given with it would be silently lost.
        lost = [name for name in properties if name in FILTER_PROPERTIES]
        if lost:
            raise UsageError(
                f"--property {lost[0]} would be overridden by the preset: gst-launch-1.0 "
                "loads @preset= after the other properties and a preset sets every filter "
                "property; write the preset's properties out with --property instead "
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
