/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A kernel that keeps a stream busy for a while: what is queued behind it
 * meanwhile then runs with all of it queued, without the gaps where the
 * GPU waits for the host to queue more (bench_time_held(), timing.c). */
#include "timing.h"

namespace {

__global__ void
hold_kernel (unsigned long long ns)
{
  unsigned long long t0, t;

  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l" (t0));
  do
    asm volatile ("mov.u64 %0, %%globaltimer;" : "=l" (t));
  while (t - t0 < ns);
}

}  /* namespace */

extern "C" cudaError_t
bench_hold (cudaStream_t stream, unsigned int usec)
{
  hold_kernel <<<1, 1, 0, stream>>> (usec * 1000ull);
  return cudaGetLastError ();
}
