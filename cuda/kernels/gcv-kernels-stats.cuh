/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics taken in the output epilogue (docs/statistics.md).
 *
 * The store helpers of gcv-kernels-common.cuh hand every output value, after
 * bias and scale and before rounding to 8 bits, to a Stats (or to NoStats,
 * which is nothing). A thread keeps, per channel, float sums of its
 * samples and of their squares, its smallest and largest (fminf and fmaxf
 * skip NaN) with the place each was first met, and the count above the
 * threshold. At the kernel's end each group of converged lanes of a warp
 * reduces these with shuffles (the values; the counts and the places of
 * the group's extremes with one redux each), and one lane adds them with
 * atomics into one of the slot's GCV_CUDA_STATS_PARTS records (doubles;
 * the extremes as 64-bit keys, so that one atomicMax keeps the value and
 * its first place). It then counts the group's samples, releasing the
 * records with the count; the group whose samples complete the frame sums
 * the records in double, writes the result into the slot's page-locked
 * result block and zeroes the records for the next frame. So a frame's
 * statistics cost no launch, copy or memset of their own, and nothing
 * waits for them but the frame's event.
 *
 * The RGBA family's tile kernels hand a thread's outputs over at once
 * (add_tile()): there an output's place is its ordinal in the thread's
 * tile, a constant, made a place once per extreme.
 *
 * A thread's samples must reach add() in row order (every family's do):
 * a tie keeps the place met first. */
#ifndef GCV_STATS_CUH
#define GCV_STATS_CUH

#include "gcv-kernels.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>

namespace gcv {

namespace cg = cooperative_groups;

/* Statistics off: nothing at all. */
struct NoStats {
  static constexpr bool on = false;
  static constexpr int channels = 0;
  template <typename V>
  __device__ __forceinline__ void add (const GcvCudaConv &, V, int, int)
  {
  }
  __device__ __forceinline__ void flush (const GcvCudaConv &) const
  {
  }
};

/* The output value of a sum, (sum + bias) * scale, before any rounding:
 * what the statistics see. */
__device__ __forceinline__ float out_value (const GcvCudaConv & p, float a)
{
  return (a + p.bias) * p.out_scale;
}
__device__ __forceinline__ float3 out_value (const GcvCudaConv & p, float3 a)
{
  return make_float3 (out_value (p, a.x), out_value (p, a.y),
      out_value (p, a.z));
}
__device__ __forceinline__ float4 out_value (const GcvCudaConv & p, float4 a)
{
  return make_float4 (out_value (p, a.x), out_value (p, a.y),
      out_value (p, a.z), out_value (p, a.w));
}

/* Float bits as an unsigned that orders as the floats do (-0 as +0); NaN
 * never gets here. */
__device__ __forceinline__ unsigned
ordered_bits (float v)
{
  unsigned b = __float_as_uint (v);
  if (b == 0x80000000u)
    b = 0;
  return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

/* The keys of GcvCudaChannelStats; 0 for NaN (no sample). */
__device__ __forceinline__ unsigned long long
min_key (float v, unsigned at)
{
  return isnan (v) ? 0ull :
      ~(((unsigned long long) ordered_bits (v) << 32) | at);
}

__device__ __forceinline__ unsigned long long
max_key (float v, unsigned at)
{
  return isnan (v) ? 0ull :
      ((unsigned long long) ordered_bits (v) << 32) | (unsigned) ~at;
}

/* One channel of one thread. */
struct ChannelStats {
  float sum, squares, min, max;
  unsigned min_at, max_at, above;

  __device__ __forceinline__ void init ()
  {
    sum = squares = 0.0f;
    min = max = __int_as_float (0x7fffffff);    /* NaN: none yet */
    min_at = max_at = above = 0;
  }

  /* NaN goes into the sums, never into the extremes (fminf and fmaxf give
   * the other operand) nor above the threshold (it compares false); the
   * place follows the value only when it changes, so a tie keeps the
   * first. */
  __device__ __forceinline__ void add (float v, unsigned at, float t)
  {
    const float lo = fminf (min, v), hi = fmaxf (max, v);
    sum += v;
    squares = fmaf (v, v, squares);
    if (lo != min)
      min_at = at;
    if (hi != max)
      max_at = at;
    min = lo;
    max = hi;
    above += fabsf (v) > t;
  }
};

/* The group's smallest and largest (fminf and fmaxf skip NaN). */
struct MinOf {
  __device__ __forceinline__ float operator() (float a, float b) const
  {
    return fminf (a, b);
  }
};
struct MaxOf {
  __device__ __forceinline__ float operator() (float a, float b) const
  {
    return fmaxf (a, b);
  }
};

/* The record this warp adds into: warps spread over them, so few add
 * into the same one. */
__device__ __forceinline__ GcvCudaChannelStats *
stats_record (const GcvCudaConv & p)
{
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y
      + gridDim.y * blockIdx.z);
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  const unsigned warp = (threadIdx.x + blockDim.x * (threadIdx.y
          + blockDim.y * threadIdx.z)) / 32;
  return p.stats->part[(block * warps + warp) % GCV_CUDA_STATS_PARTS];
}

/* A group's sums of one channel, reduced: floats through shuffles (the
 * order of the butterfly, so the same sums as before), the count with a
 * redux. */
struct GroupSums {
  float sum, squares, min, max;
  unsigned above;

  __device__ __forceinline__ GroupSums (const cg::coalesced_group & g,
      float s, float q, float lo, float hi, unsigned a)
  {
    sum = cg::reduce (g, s, cg::plus<float> ());
    squares = cg::reduce (g, q, cg::plus<float> ());
    min = cg::reduce (g, lo, MinOf ());
    max = cg::reduce (g, hi, MaxOf ());
    above = cg::reduce (g, a, cg::plus<unsigned> ());
  }

  /* by one lane */
  __device__ __forceinline__ void add_sums (GcvCudaChannelStats * rec) const
  {
    atomicAdd (&rec->sum, (double) sum);
    atomicAdd (&rec->sum_squares, (double) squares);
    atomicAdd (&rec->above, (unsigned long long) above);
  }
};

/* The first place of the group's extreme: the least of those its lanes
 * hold (~0u from a lane whose own is not it). */
__device__ __forceinline__ unsigned
first_place (const cg::coalesced_group & g, unsigned at)
{
  return cg::reduce (g, at, cg::less<unsigned> ());
}

/* One channel of the group's lanes reduced, then added by one lane: the
 * place of each extreme from the lanes whose own extreme it is (-0 and +0
 * are one value, as in the keys). */
__device__ __forceinline__ void
flush_channel (const cg::coalesced_group & g, GcvCudaChannelStats * rec,
    const ChannelStats & cs)
{
  const GroupSums s (g, cs.sum, cs.squares, cs.min, cs.max, cs.above);
  const unsigned lo_at = first_place (g, cs.min == s.min ? cs.min_at : ~0u);
  const unsigned hi_at = first_place (g, cs.max == s.max ? cs.max_at : ~0u);
  if (g.thread_rank () == 0) {
    s.add_sums (rec);
    atomicMax (&rec->min_key, min_key (s.min, lo_at));
    atomicMax (&rec->max_key, max_key (s.max, hi_at));
  }
}

__device__ __forceinline__ float component (float v, int)
{
  return v;
}
__device__ __forceinline__ float component (float4 v, int k)
{
  return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}
__device__ __forceinline__ float component (float3 v, int k)
{
  return k == 0 ? v.x : k == 1 ? v.y : v.z;
}

/* The group whose samples completed the frame: the records summed (in
 * double) into the result, and zeroed. Not inlined: one copy per
 * translation unit, run by one group a frame. */
template <int C>
__device__ __noinline__ void
stats_finish (GcvCudaStatsState * st, GcvCudaStatsResult * out,
    unsigned total)
{
  const cg::coalesced_group g = cg::coalesced_threads ();

  /* the other groups' atomics came before their count (released with
   * it), and their count before ours: acquire them, and read where the
   * atomics went, in L2 */
  __threadfence ();
#pragma unroll 1
  for (int k = 0; k < C; k++) {
    double sum = 0.0, squares = 0.0;
    unsigned long long above = 0, lo = 0, hi = 0, v;
#pragma unroll 1
    for (unsigned i = g.thread_rank (); i < GCV_CUDA_STATS_PARTS;
        i += g.size ()) {
      GcvCudaChannelStats *r = &st->part[i][k];
      sum += __ldcg (&r->sum);
      squares += __ldcg (&r->sum_squares);
      above += __ldcg (&r->above);
      v = __ldcg (&r->min_key);
      lo = v > lo ? v : lo;
      v = __ldcg (&r->max_key);
      hi = v > hi ? v : hi;
      __stcg (&r->sum, 0.0);
      __stcg (&r->sum_squares, 0.0);
      __stcg (&r->above, 0ull);
      __stcg (&r->min_key, 0ull);
      __stcg (&r->max_key, 0ull);
    }
    sum = cg::reduce (g, sum, cg::plus<double> ());
    squares = cg::reduce (g, squares, cg::plus<double> ());
    above = cg::reduce (g, above, cg::plus<unsigned long long> ());
    lo = cg::reduce (g, lo, cg::greater<unsigned long long> ());
    hi = cg::reduce (g, hi, cg::greater<unsigned long long> ());
    if (g.thread_rank () == 0) {
      GcvCudaChannelStats *o = &out->channel[k];
      o->sum = sum;
      o->sum_squares = squares;
      o->above = above;
      o->min_key = lo;
      o->max_key = hi;
    }
  }
  if (g.thread_rank () == 0) {
    st->samples = 0;
    /* the channels reach the host before the mark that they are there */
    __threadfence_system ();
    *(volatile unsigned *) &out->samples = total;
  }
}

/* A thread's statistics of a C-channel output. */
template <int C>
struct Stats {
  static constexpr bool on = true;
  static constexpr int channels = C;
  ChannelStats c[C];
  unsigned n;                   /* samples added */
  bool flushed;                 /* add_tile() has flushed the channels */

  __device__ __forceinline__ Stats ()
  {
    n = 0;
    flushed = false;
#pragma unroll
    for (int k = 0; k < C; k++)
      c[k].init ();
  }

  static __device__ __forceinline__ unsigned place (const GcvCudaConv & p,
      int x, int y)
  {
    return p.stats_origin + (unsigned) y * p.stats_stride + (unsigned) x;
  }

  __device__ __forceinline__ void add (const GcvCudaConv & p, float v, int x,
      int y)
  {
    static_assert (C == 1, "one channel");
    c[0].add (v, place (p, x, y), p.stats_threshold);
    n++;
  }

  __device__ __forceinline__ void add (const GcvCudaConv & p, float3 v,
      int x, int y)
  {
    static_assert (C == 3, "three channels");
    const unsigned at = place (p, x, y);
    c[0].add (v.x, at, p.stats_threshold);
    c[1].add (v.y, at, p.stats_threshold);
    c[2].add (v.z, at, p.stats_threshold);
    n++;
  }

  /* all four, also where the fourth byte is copied (unpacked RGBA with
   * alpha=passthrough): the host reports the first three there */
  __device__ __forceinline__ void add (const GcvCudaConv & p, float4 v,
      int x, int y)
  {
    static_assert (C == 4, "four channels");
    const unsigned at = place (p, x, y);
    c[0].add (v.x, at, p.stats_threshold);
    c[1].add (v.y, at, p.stats_threshold);
    c[2].add (v.z, at, p.stats_threshold);
    c[3].add (v.w, at, p.stats_threshold);
    n++;
  }

  /* Channel k of a thread's TY x 4 tile outputs at (x, y) into `cs`
   * (ALL: all of them in the frame, so no check each), each output's
   * place its ordinal t * 4 + q, a constant of the unrolled loops:
   * add_tile() turns the extremes' into places once. */
  template <bool ALL, int TY, typename Acc>
  static __device__ __forceinline__ void add_channel (const GcvCudaConv & p,
      int x, int y, const Acc (&acc)[TY][4], int k, ChannelStats & cs)
  {
#pragma unroll
    for (int t = 0; t < TY; t++)
#pragma unroll
      for (int q = 0; q < 4; q++)
        if (ALL || (y + t < p.height && x + q < p.width))
          cs.add (out_value (p, component (acc[t][q], k)), t * 4 + q,
              p.stats_threshold);
  }

  /* A thread's TY x 4 outputs at (x, y) of a tile kernel (those inside
   * the frame), after their stores: one channel at a time, each flushed
   * before the next, so that one channel's sums are held at a time, not
   * C (the RGBA family's epilogue, whose sums already fill the registers
   * its loops had). */
  template <int TY, typename Acc>
  __device__ __forceinline__ void add_tile (const GcvCudaConv & p, int x,
      int y, const Acc (&acc)[TY][4])
  {
    const bool whole = x + 4 <= p.width && y + TY <= p.height;
    unsigned count = 0;
#pragma unroll
    for (int t = 0; t < TY; t++)
      if (y + t < p.height && x < p.width)
        count += min (4, p.width - x);
    const cg::coalesced_group g = cg::coalesced_threads ();
    n += count;
    flushed = true;
    if (cg::reduce (g, count, cg::plus<unsigned> ()) == 0)
      return;
    GcvCudaChannelStats *rec = stats_record (p);
#pragma unroll
    for (int k = 0; k < C; k++) {
      ChannelStats cs;
      cs.init ();
      /* apart, so that a whole tile's outputs take no branch each */
      if (whole)
        add_channel<true> (p, x, y, acc, k, cs);
      else
        add_channel<false> (p, x, y, acc, k, cs);
      cs.min_at = place (p, x + cs.min_at % 4, y + cs.min_at / 4);
      cs.max_at = place (p, x + cs.max_at % 4, y + cs.max_at / 4);
      flush_channel (g, rec + k, cs);
    }
  }

  /* At the kernel's end (or the end of a step that stored outputs), by
   * every thread that added samples (any others may have left): the
   * converged lanes reduce theirs, one of them adds the group's into a
   * record and counts its samples. */
  __device__ __forceinline__ void flush (const GcvCudaConv & p) const
  {
    const cg::coalesced_group g = cg::coalesced_threads ();
    const unsigned samples = cg::reduce (g, n, cg::plus<unsigned> ());
    unsigned before = 0;

    if (samples == 0)
      return;                   /* the same in the whole group */
    if (!flushed) {
      GcvCudaChannelStats *rec = stats_record (p);
#pragma unroll
      for (int k = 0; k < C; k++)
        flush_channel (g, rec + k, c[k]);
    }
    if (g.thread_rank () == 0) {
      /* the records before the count: a release, which waits for this
       * thread's writes but, unlike __threadfence(), neither orders them
       * with every other thread's nor empties the SM's L1 (the group
       * that finishes acquires, in stats_finish()) */
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> count
          (p.stats->samples);
      before = count.fetch_add (samples, cuda::memory_order_release);
    }
    if (g.shfl (before, 0) + samples == p.stats->total)
      stats_finish<C> (p.stats, p.stats->result, p.stats->total);
  }
};

template <typename Acc> struct StatsOf;
template <> struct StatsOf<float> { typedef Stats<1> T; };
template <> struct StatsOf<float3> { typedef Stats<3> T; };
template <> struct StatsOf<float4> { typedef Stats<4> T; };

/* What a kernel's epilogue measures with: Stats (ON: the kernel instance
 * launched for frames that ask for statistics) or NoStats (the instance
 * for the others, which compiles as it did before there were any). A
 * thread that has added samples must reach flush(), so the epilogue has
 * no `return` after its first store. */
template <typename Acc, bool ON> struct StatsFor {
  typedef NoStats T;
};
template <typename Acc> struct StatsFor<Acc, true> {
  typedef typename StatsOf<Acc>::T T;
};

}  /* namespace gcv */

#endif /* GCV_STATS_CUH */
