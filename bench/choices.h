/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-bench --choices: what the engine settles for each
 * configuration, with no frame run and nothing timed. */
#ifndef BENCH_CHOICES_H
#define BENCH_CHOICES_H

#include "configs.h"

G_BEGIN_DECLS

/* Prints one line per configuration and family: the plan's record of what
 * runs (gcv_plan_get_choice()) and its text. On the CUDA engine of
 * `device` where one is usable, else on the CPU engine (said in the first
 * line), with `tuning_file` where given (gcv_engine_set_tuning_file()).
 * Returns the exit status. */
int bench_list_choices (const BenchPlan * plan, int device, guint32 seed,
    const char *tuning_file);

G_END_DECLS

#endif /* BENCH_CHOICES_H */
