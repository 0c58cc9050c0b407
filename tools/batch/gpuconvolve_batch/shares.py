# SPDX-License-Identifier: LGPL-2.1-or-later
"""How many slots a batch runs, and what each asks Ray for."""
from __future__ import annotations

from dataclasses import dataclass

# Files run at once on each GPU, by default: one stream per NVDEC engine
# plus one. Measured on H200s (7 NVDEC engines each): N independent 1080p
# H.264 streams through nvh264dec ! gpuconvolve in one process reach the
# decoders' capacity (about 5,400 frames/s a GPU) from N = 8 on
# (docs/batch.md, "Choosing --files-per-gpu"; bench/archive-batch.sh
# measures it again).
FILES_PER_GPU = 8


@dataclass
class SlotShare:
    """What each slot asks Ray for, and how many there are."""
    count: int
    gpus: float
    cpus: float


_STEP = 10000                    # Ray counts resources in steps of 1/10000


def share_of(files_per_gpu: int, gpus_per_task: float | None, cpus_per_task: float,
             cluster_gpus: float, cluster_cpus: float) -> SlotShare:
    """How many slots, and each one's share. A share of a GPU is rounded
    down to Ray's step so that N of them fit a GPU (1/6 rounded to nearest
    would fit 5). A cluster without GPUs now, where GPUs are asked for,
    gets one GPU's worth of slots, which wait for a node with GPUs."""
    if gpus_per_task is None:
        gpus = (_STEP // files_per_gpu) / _STEP if cluster_gpus > 0 else 0.0
    elif gpus_per_task < 1:
        gpus = int(gpus_per_task * _STEP) / _STEP
    else:
        gpus = gpus_per_task
    whole_gpus = max(int(cluster_gpus), 1)
    if gpus == 0:
        count = int(cluster_cpus // cpus_per_task) if cpus_per_task > 0 else int(cluster_cpus)
    elif gpus < 1:
        count = whole_gpus * (_STEP // int(gpus * _STEP))
    else:
        count = int(whole_gpus // gpus)
    return SlotShare(count=max(count, 1), gpus=gpus, cpus=cpus_per_task)


def cpu_limit(share: SlotShare, cluster_cpus: float) -> int | None:
    """The slots that the cluster's CPUs hold, where fewer than asked."""
    if share.cpus > 0 and share.count * share.cpus > cluster_cpus:
        return max(1, int(cluster_cpus // share.cpus))
    return None
