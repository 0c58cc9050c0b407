/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Copy floor, FMA peak and PCIe transfer limits. */
#include "hw-limits.h"
#include "common.h"

#include <cuda_runtime.h>
#include <string.h>

/* --- device-to-device copy ------------------------------------------------ */

/* Rows of 16-byte words; each thread moves COPY_VECS words of one row. */
#define COPY_VECS 4

__global__ void
copy_rows_v4 (const uint4 * __restrict__ src, size_t src_pitch,
    uint4 * __restrict__ dst, size_t dst_pitch, unsigned int n_vec,
    unsigned int height)
{
  unsigned int x0 = (blockIdx.x * blockDim.x) * COPY_VECS + threadIdx.x;

  for (unsigned int y = blockIdx.y; y < height; y += gridDim.y) {
    const uint4 *s = (const uint4 *) ((const char *) src + y * src_pitch);
    uint4 *d = (uint4 *) ((char *) dst + y * dst_pitch);
    uint4 v[COPY_VECS];
#pragma unroll
    for (int k = 0; k < COPY_VECS; k++) {
      unsigned int x = x0 + k * blockDim.x;
      if (x < n_vec)
        v[k] = s[x];
    }
#pragma unroll
    for (int k = 0; k < COPY_VECS; k++) {
      unsigned int x = x0 + k * blockDim.x;
      if (x < n_vec)
        d[x] = v[k];
    }
  }
}

__global__ void
copy_rows_u8 (const unsigned char *__restrict__ src, size_t src_pitch,
    unsigned char *__restrict__ dst, size_t dst_pitch, unsigned int n,
    unsigned int height)
{
  for (unsigned int y = blockIdx.y; y < height; y += gridDim.y)
    for (unsigned int x = blockIdx.x * blockDim.x + threadIdx.x; x < n;
        x += gridDim.x * blockDim.x)
      dst[y * dst_pitch + x] = src[y * src_pitch + x];
}

typedef struct {
  cudaStream_t stream;
  void *src, *dst;
  size_t src_pitch, dst_pitch;
  gsize row_bytes;
  guint height;
} CopyJob;

static void
copy_memcpy2d (gpointer user)
{
  CopyJob *j = (CopyJob *) user;
  BENCH_CUDA (cudaMemcpy2DAsync (j->dst, j->dst_pitch, j->src, j->src_pitch,
          j->row_bytes, j->height, cudaMemcpyDeviceToDevice, j->stream));
}

static void
copy_kernel (gpointer user)
{
  CopyJob *j = (CopyJob *) user;
  const unsigned int threads = 256;
  unsigned int gy = MIN (j->height, 65535u);

  if (j->row_bytes % 16 == 0) {
    unsigned int n_vec = (unsigned int) (j->row_bytes / 16);
    dim3 grid ((n_vec + threads * COPY_VECS - 1) / (threads * COPY_VECS), gy);
    copy_rows_v4 <<< grid, threads, 0, j->stream >>> ((const uint4 *) j->src,
        j->src_pitch, (uint4 *) j->dst, j->dst_pitch, n_vec, j->height);
  } else {
    unsigned int n = (unsigned int) j->row_bytes;
    dim3 grid (MIN ((n + threads - 1) / threads, 64u), gy);
    copy_rows_u8 <<< grid, threads, 0, j->stream >>> ((const unsigned char *)
        j->src, j->src_pitch, (unsigned char *) j->dst, j->dst_pitch, n,
        j->height);
  }
  BENCH_CUDA (cudaGetLastError ());
}

void
bench_limit_copy (gsize row_bytes, guint height, guint warmup, guint runs,
    BenchCopyLimit * out)
{
  CopyJob j;

  j.row_bytes = row_bytes;
  j.height = height;
  BENCH_CUDA (cudaStreamCreateWithFlags (&j.stream, cudaStreamNonBlocking));
  BENCH_CUDA (cudaMallocPitch (&j.src, &j.src_pitch, row_bytes, height));
  BENCH_CUDA (cudaMallocPitch (&j.dst, &j.dst_pitch, row_bytes, height));
  BENCH_CUDA (cudaMemset2DAsync (j.src, j.src_pitch, 1, row_bytes, height,
          j.stream));
  BENCH_CUDA (cudaStreamSynchronize (j.stream));

  bench_time (j.stream, copy_memcpy2d, NULL, &j, warmup, runs, &out->memcpy2d);
  bench_time (j.stream, copy_kernel, NULL, &j, warmup, runs, &out->kernel);
  if (out->kernel.median < out->memcpy2d.median) {
    out->best = out->kernel;
    out->best_name = "kernel";
  } else {
    out->best = out->memcpy2d;
    out->best_name = "memcpy2d";
  }
  out->gbps = 2.0 * row_bytes * height / (out->best.median * 1e6);

  BENCH_CUDA (cudaStreamSynchronize (j.stream));
  BENCH_CUDA (cudaFree (j.src));
  BENCH_CUDA (cudaFree (j.dst));
  BENCH_CUDA (cudaStreamDestroy (j.stream));
}

/* --- FP32 FMA peak -------------------------------------------------------- */

/* Independent FMA chains per thread: enough to cover the FMA latency with a
 * few warps per scheduler. */
#define FMA_CHAINS 8
#define FMA_ITERS 32768
#define FMA_THREADS 256

__global__ void __launch_bounds__ (FMA_THREADS)
fma_peak (float *out, float b, float c, int iters)
{
  float a[FMA_CHAINS];

#pragma unroll
  for (int k = 0; k < FMA_CHAINS; k++)
    a[k] = (float) (threadIdx.x + k) * 1e-3f;
#pragma unroll 16
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < FMA_CHAINS; k++)
      a[k] = fmaf (a[k], b, c);
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; k++)
    s += a[k];
  /* never true for the arguments used, but the compiler cannot know */
  if (s == -1.0f)
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

typedef struct {
  cudaStream_t stream;
  float *out;
  unsigned int blocks;
} FmaJob;

static void
fma_run (gpointer user)
{
  FmaJob *j = (FmaJob *) user;
  fma_peak <<< j->blocks, FMA_THREADS, 0, j->stream >>> (j->out, 0.9999999f,
      1e-7f, FMA_ITERS);
  BENCH_CUDA (cudaGetLastError ());
}

void
bench_limit_fma (guint warmup, guint runs, BenchFmaLimit * out)
{
  FmaJob j;
  int device, sms, threads_per_sm;

  BENCH_CUDA (cudaGetDevice (&device));
  BENCH_CUDA (cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount,
          device));
  BENCH_CUDA (cudaDeviceGetAttribute (&threads_per_sm,
          cudaDevAttrMaxThreadsPerMultiProcessor, device));
  /* full occupancy, several waves so the tail does not count */
  j.blocks = (unsigned int) sms * (threads_per_sm / FMA_THREADS) * 4;
  BENCH_CUDA (cudaStreamCreateWithFlags (&j.stream, cudaStreamNonBlocking));
  BENCH_CUDA (cudaMalloc ((void **) &j.out,
          sizeof (float) * j.blocks * FMA_THREADS));
  bench_time (j.stream, fma_run, NULL, &j, warmup, runs, &out->stats);
  out->gflops = 2.0 * FMA_CHAINS * (double) FMA_ITERS * j.blocks *
      FMA_THREADS / (out->stats.median * 1e6);
  BENCH_CUDA (cudaStreamSynchronize (j.stream));
  BENCH_CUDA (cudaFree (j.out));
  BENCH_CUDA (cudaStreamDestroy (j.stream));
}

/* --- PCIe ----------------------------------------------------------------- */

typedef struct {
  cudaStream_t up, down;
  cudaEvent_t fork, join;
  void *host_in, *host_out, *dev_in, *dev_out;
  gsize bytes;
} PcieJob;

static void
pcie_h2d (gpointer user)
{
  PcieJob *j = (PcieJob *) user;
  BENCH_CUDA (cudaMemcpyAsync (j->dev_in, j->host_in, j->bytes,
          cudaMemcpyHostToDevice, j->up));
}

static void
pcie_d2h (gpointer user)
{
  PcieJob *j = (PcieJob *) user;
  BENCH_CUDA (cudaMemcpyAsync (j->host_out, j->dev_out, j->bytes,
          cudaMemcpyDeviceToHost, j->up));
}

/* Timed on `up`: `down` joins after the start event and `up` waits for it
 * before the stop event. */
static void
pcie_duplex (gpointer user)
{
  PcieJob *j = (PcieJob *) user;
  BENCH_CUDA (cudaEventRecord (j->fork, j->up));
  BENCH_CUDA (cudaStreamWaitEvent (j->down, j->fork, 0));
  BENCH_CUDA (cudaMemcpyAsync (j->dev_in, j->host_in, j->bytes,
          cudaMemcpyHostToDevice, j->up));
  BENCH_CUDA (cudaMemcpyAsync (j->host_out, j->dev_out, j->bytes,
          cudaMemcpyDeviceToHost, j->down));
  BENCH_CUDA (cudaEventRecord (j->join, j->down));
  BENCH_CUDA (cudaStreamWaitEvent (j->up, j->join, 0));
}

void
bench_limit_pcie (gsize bytes, guint warmup, guint runs, BenchPcieLimit * out)
{
  PcieJob j;

  j.bytes = bytes;
  BENCH_CUDA (cudaStreamCreateWithFlags (&j.up, cudaStreamNonBlocking));
  BENCH_CUDA (cudaStreamCreateWithFlags (&j.down, cudaStreamNonBlocking));
  BENCH_CUDA (cudaEventCreateWithFlags (&j.fork, cudaEventDisableTiming));
  BENCH_CUDA (cudaEventCreateWithFlags (&j.join, cudaEventDisableTiming));
  BENCH_CUDA (cudaHostAlloc (&j.host_in, bytes, cudaHostAllocDefault));
  BENCH_CUDA (cudaHostAlloc (&j.host_out, bytes, cudaHostAllocDefault));
  BENCH_CUDA (cudaMalloc (&j.dev_in, bytes));
  BENCH_CUDA (cudaMalloc (&j.dev_out, bytes));
  memset (j.host_in, 1, bytes);
  BENCH_CUDA (cudaMemsetAsync (j.dev_out, 2, bytes, j.up));
  BENCH_CUDA (cudaStreamSynchronize (j.up));

  bench_time (j.up, pcie_h2d, NULL, &j, warmup, runs, &out->h2d);
  bench_time (j.up, pcie_d2h, NULL, &j, warmup, runs, &out->d2h);
  bench_time (j.up, pcie_duplex, NULL, &j, warmup, runs, &out->duplex);
  out->h2d_gbps = bytes / (out->h2d.median * 1e6);
  out->d2h_gbps = bytes / (out->d2h.median * 1e6);
  out->duplex_gbps = 2.0 * bytes / (out->duplex.median * 1e6);

  BENCH_CUDA (cudaStreamSynchronize (j.up));
  BENCH_CUDA (cudaStreamSynchronize (j.down));
  BENCH_CUDA (cudaFreeHost (j.host_in));
  BENCH_CUDA (cudaFreeHost (j.host_out));
  BENCH_CUDA (cudaFree (j.dev_in));
  BENCH_CUDA (cudaFree (j.dev_out));
  BENCH_CUDA (cudaEventDestroy (j.fork));
  BENCH_CUDA (cudaEventDestroy (j.join));
  BENCH_CUDA (cudaStreamDestroy (j.up));
  BENCH_CUDA (cudaStreamDestroy (j.down));
}
