# SPDX-License-Identifier: LGPL-2.1-or-later
"""How many workers a batch runs, how many files each runs at once, and
what each asks Ray for: one worker process per GPU (per node without
GPUs), its files side by side in it."""
from __future__ import annotations

from dataclasses import dataclass, field

# Files run at once on each GPU, by default: one stream per NVDEC engine
# plus one. Measured on H200s (7 NVDEC engines each): N independent 1080p
# H.264 streams through nvh264dec ! gpuconvolve in one process reach the
# decoders' capacity (about 5,400 frames/s a GPU) from N = 8 on
# (docs/batch.md, "Choosing --files-per-gpu"; bench/archive-batch.sh
# measures it again).
FILES_PER_GPU = 8


@dataclass
class WorkerShare:
    """One worker: the files it runs at once, Ray's resources for it, and
    the node it belongs to (without GPUs: one worker a node)."""
    files: int
    gpus: float
    cpus: float
    node: str | None = None


@dataclass
class Share:
    """The batch's workers; `gpus_per_file` and `cpus_per_file` as the
    report gives them."""
    workers: list[WorkerShare] = field(default_factory=list)
    gpus_per_file: float = 0.0
    cpus_per_file: float = 1.0

    @property
    def files(self) -> int:
        """Files run at once in all."""
        return sum(w.files for w in self.workers)


def share_of(files_per_gpu: int, gpus_per_task: float | None, cpus_per_task: float,
             cluster_gpus: float, nodes: dict[str, float]) -> Share:
    """The workers. With GPUs: one a GPU, `files_per_gpu` files each
    (--gpus-per-task g: 1/g files a GPU below 1, else one file on g GPUs).
    A cluster without GPUs now, where GPUs are asked for, gets one GPU's
    worker, which waits for a node with GPUs. Without GPUs
    (`gpus_per_task` 0, or none in the cluster): one worker a node of
    `nodes` (node id: its CPUs), its CPUs / `cpus_per_task` files."""
    cpus = cpus_per_task
    if gpus_per_task == 0 or (gpus_per_task is None and cluster_gpus == 0):
        workers = []
        for node, node_cpus in sorted(nodes.items()):
            files = int(node_cpus // cpus) if cpus > 0 else int(node_cpus)
            if files >= 1:
                workers.append(WorkerShare(files, 0.0, files * cpus, node))
        if not workers:                  # (waits for a node that fits)
            workers = [WorkerShare(1, 0.0, cpus)]
        return Share(workers, 0.0, cpus)
    if gpus_per_task is None:
        files, gpus = files_per_gpu, 1.0
    elif gpus_per_task < 1:
        files, gpus = max(int(round(1 / gpus_per_task)), 1), 1.0
    else:
        files, gpus = 1, float(gpus_per_task)
    count = max(int(max(cluster_gpus, 1) // gpus), 1)
    return Share([WorkerShare(files, gpus, files * cpus) for _ in range(count)],
                 gpus / files, cpus)


def fit(share: Share, cluster_cpus: float, files: int) -> str | None:
    """Bounds the GPU workers by the cluster's CPUs (fewer files a
    worker) and every worker by the files there are (fewer workers, then
    fewer files a worker). Returns a notice where the CPUs bound them."""
    notice = None
    gpu = share.gpus_per_file > 0
    if gpu and share.cpus_per_file > 0 and share.files * share.cpus_per_file > cluster_cpus:
        each = max(1, int(cluster_cpus // share.cpus_per_file) // len(share.workers))
        notice = (f"{share.files} files at once of {share.cpus_per_file:g} CPU(s) each do not "
                  f"fit the cluster's {cluster_cpus:g} CPUs: {each} a worker (a smaller "
                  "--cpus-per-task fits more)")
        for w in share.workers:
            w.files = min(w.files, each)
            w.cpus = w.files * share.cpus_per_file
    while len(share.workers) > 1 and share.files - share.workers[-1].files >= files:
        share.workers.pop()
    if gpu and len(share.workers) == 1 and share.workers[0].files > files:
        w = share.workers[0]
        w.files = max(files, 1)
        w.cpus = w.files * share.cpus_per_file
    return notice
