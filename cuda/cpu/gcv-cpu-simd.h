/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How the CPU backend's row loops are compiled, and the vectors they use;
 * included by each file of cuda/cpu that has such loops, after its other
 * includes (the pragma holds for the functions defined after it). */
#ifndef GCV_CPU_SIMD_H
#define GCV_CPU_SIMD_H

#include <glib.h>

/* Hot loops get an AVX2+FMA clone (x86-64-v3, chosen by instruction set:
 * "arch=haswell" is chosen by CPU model and missed virtual CPUs) picked at
 * load time; other CPUs run the baseline build. GCC's -O2 vectorises only
 * loops with no remainder, and with trapping math it will not turn the
 * clamps of 8-bit output into selects, so these files are built at -O3
 * without it (nothing here reads floating-point exception flags). In ISO C
 * mode GCC does not fuse a * b + c, so the clone would have no FMA without
 * fp-contract=fast; fused or not, the result is within the same bounds. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("O3", "no-trapping-math", "fp-contract=fast")
#define GCV_SIMD_CLONES __attribute__((target_clones ("arch=x86-64-v3", "default")))
#else
#define GCV_SIMD_CLONES
#endif

/* Eight floats, an AVX register (GCC splits it in two on the baseline),
 * and the same at any float alignment for loads and stores. */
typedef gfloat vf8 __attribute__((vector_size (32)));
typedef gfloat vf8u __attribute__((vector_size (32), aligned (4), may_alias));
typedef gint32 vi8 __attribute__((vector_size (32)));

#define LANES 8
#define LOAD(p) (*(const vf8u *) (p))
#define STORE(p, v) (*(vf8u *) (p) = (v))

#endif /* GCV_CPU_SIMD_H */
