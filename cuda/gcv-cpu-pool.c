/* Fork-join worker pool: the caller takes part as worker 0, the helper
 * threads sleep between jobs. Tasks are handed out through an atomic
 * counter, so uneven rows balance out. */
#include "gcv-cpu-pool.h"

struct _GcvCpuPool {
  guint n_workers;
  GThread **threads;            /* n_workers - 1 helpers */
  GMutex lock;
  GCond start, done;
  guint generation;             /* bumped for each job */
  guint busy;                   /* helpers still in the current job */
  gboolean quit;
  /* the current job */
  GcvCpuTaskFunc func;
  gpointer ctx;
  guint n_tasks;
  gint next_task;
};

static void
work (GcvCpuPool * pool, guint worker)
{
  guint task;

  while ((task = (guint) g_atomic_int_add (&pool->next_task, 1))
      < pool->n_tasks)
    pool->func (pool->ctx, task, worker);
}

typedef struct {
  GcvCpuPool *pool;
  guint worker;
} Helper;

static gpointer
helper_main (gpointer data)
{
  Helper *h = data;
  GcvCpuPool *pool = h->pool;
  guint seen = 0;

  g_mutex_lock (&pool->lock);
  for (;;) {
    while (!pool->quit && pool->generation == seen)
      g_cond_wait (&pool->start, &pool->lock);
    if (pool->quit)
      break;
    seen = pool->generation;
    g_mutex_unlock (&pool->lock);
    work (pool, h->worker);
    g_mutex_lock (&pool->lock);
    if (--pool->busy == 0)
      g_cond_signal (&pool->done);
  }
  g_mutex_unlock (&pool->lock);
  g_free (h);
  return NULL;
}

GcvCpuPool *
gcv_cpu_pool_new (guint n_workers)
{
  GcvCpuPool *pool = g_new0 (GcvCpuPool, 1);

  pool->n_workers = MAX (n_workers, 1);
  g_mutex_init (&pool->lock);
  g_cond_init (&pool->start);
  g_cond_init (&pool->done);
  pool->threads = g_new0 (GThread *, pool->n_workers);
  for (guint i = 1; i < pool->n_workers; i++) {
    Helper *h = g_new (Helper, 1);
    h->pool = pool;
    h->worker = i;
    pool->threads[i - 1] = g_thread_new ("gcv-cpu", helper_main, h);
  }
  return pool;
}

guint
gcv_cpu_pool_get_n_workers (GcvCpuPool * pool)
{
  return pool->n_workers;
}

void
gcv_cpu_pool_run (GcvCpuPool * pool, guint n_tasks, GcvCpuTaskFunc func,
    gpointer ctx)
{
  if (pool->n_workers == 1 || n_tasks <= 1) {
    for (guint t = 0; t < n_tasks; t++)
      func (ctx, t, 0);
    return;
  }
  g_mutex_lock (&pool->lock);
  pool->func = func;
  pool->ctx = ctx;
  pool->n_tasks = n_tasks;
  g_atomic_int_set (&pool->next_task, 0);
  pool->busy = pool->n_workers - 1;
  pool->generation++;
  g_cond_broadcast (&pool->start);
  g_mutex_unlock (&pool->lock);

  work (pool, 0);

  g_mutex_lock (&pool->lock);
  while (pool->busy > 0)
    g_cond_wait (&pool->done, &pool->lock);
  g_mutex_unlock (&pool->lock);
}

void
gcv_cpu_pool_free (GcvCpuPool * pool)
{
  if (!pool)
    return;
  g_mutex_lock (&pool->lock);
  pool->quit = TRUE;
  g_cond_broadcast (&pool->start);
  g_mutex_unlock (&pool->lock);
  for (guint i = 0; i + 1 < pool->n_workers; i++)
    g_thread_join (pool->threads[i]);
  g_free (pool->threads);
  g_mutex_clear (&pool->lock);
  g_cond_clear (&pool->start);
  g_cond_clear (&pool->done);
  g_free (pool);
}
