/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A frame's launches replayed as a CUDA graph. A small frame costs the
 * host more than the GPU: each launch is some microseconds of the host's
 * time, and a 16-bit frame of host memory queues four of them (widen,
 * halo, filter, narrow) between its upload and its download. Where a
 * slot's frames queue the same launches frame after frame (host frames
 * with no regions or statistics, gcv-cuda-frame.c), they are captured
 * once into a graph, and each frame after queues the graph: one call for
 * all of them (docs/performance.md). The key says what the launches are
 * (the filter's serial and the slot's buffers): a key is captured the
 * second frame in a row it comes, so a filter changed on every frame runs
 * its launches as they are, never paying for a capture. */
#include "gcv-cuda-private.h"

#include <string.h>

static gboolean
same_key (const CudaGraphKey * a, const CudaGraphKey * b)
{
  return memcmp (a, b, sizeof (*a)) == 0;
}

gboolean
gcv_cuda_graph_run (CudaSlot * s, const CudaGraphKey * key, CudaWork work,
    gpointer data, GError ** error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaError_t end;
  gboolean ok;

  if (s->graph && same_key (key, &s->graph_key))
    return CHECK (cudaGraphLaunch (s->graph, s->stream), OP_LAUNCH);
  if (!same_key (key, &s->last_key)) {
    s->last_key = *key;
    return work (data, error);
  }
  /* relaxed: the launchers may set a kernel's attributes once */
  if (!CHECK (cudaStreamBeginCapture (s->stream,
              cudaStreamCaptureModeRelaxed), OP_OTHER))
    return FALSE;
  ok = work (data, error);
  /* ended whatever happened, so that the stream takes work again */
  end = cudaStreamEndCapture (s->stream, &graph);
  ok = ok && CHECK (end, OP_OTHER)
      && CHECK (cudaGraphInstantiate (&exec, graph, 0), OP_OTHER);
  if (graph)
    cudaGraphDestroy (graph);
  if (!ok)
    return FALSE;
  /* (a launch of the old one still queued keeps it until it is done) */
  if (s->graph)
    cudaGraphExecDestroy (s->graph);
  s->graph = exec;
  s->graph_key = *key;
  return CHECK (cudaGraphLaunch (exec, s->stream), OP_LAUNCH);
}
