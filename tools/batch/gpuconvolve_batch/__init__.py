# SPDX-License-Identifier: LGPL-2.1-or-later
"""gpuconvolve-batch: runs gpuconvolve pipelines over many video files, one
Ray task per file, on one machine or a Ray cluster (docs/batch.md)."""
