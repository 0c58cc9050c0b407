/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fork-join pool of worker threads, created once per engine. */
#ifndef GCV_CPU_POOL_H
#define GCV_CPU_POOL_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _GcvCpuPool GcvCpuPool;
/* Runs task `task` on worker `worker` (0..n_workers-1). */
typedef void (*GcvCpuTaskFunc) (gpointer ctx, guint task, guint worker);

GcvCpuPool *gcv_cpu_pool_new (guint n_workers);
guint gcv_cpu_pool_get_n_workers (GcvCpuPool * pool);
/* Runs tasks 0..n_tasks-1 on the workers and the calling thread; returns when
 * all are done. */
void gcv_cpu_pool_run (GcvCpuPool * pool, guint n_tasks, GcvCpuTaskFunc func,
    gpointer ctx);
void gcv_cpu_pool_free (GcvCpuPool * pool);

G_END_DECLS

#endif /* GCV_CPU_POOL_H */
