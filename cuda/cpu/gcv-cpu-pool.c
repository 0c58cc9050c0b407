/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fork-join worker pool: the caller takes part as worker 0, the helper
 * threads wait between jobs. Tasks are handed out through an atomic
 * counter, so uneven rows balance out.
 *
 * Waking a sleeping thread takes tens of microseconds on some machines
 * (virtual ones above all), a tenth of a millisecond-long frame, twice per
 * frame: once to start the helpers and once to tell the caller they are
 * done. So both sides spin for a short while first, helpers after a job
 * for the next one, the caller for the helpers, and only then sleep. The
 * spin yields the CPU at each turn: the thread waited for may have been
 * woken onto the spinning thread's CPU, and would otherwise wait for the
 * spin to end. */
#include "gcv-cpu-pool.h"

#include <sched.h>

/* How long a thread spins before it sleeps: long enough to span the gap
 * between the frames of a busy stream and a helper's last task, short
 * enough that an idle pool costs next to nothing. */
#define SPIN_US 200

struct _GcvCpuPool {
  guint n_workers;
  GThread **threads;            /* n_workers - 1 helpers */
  GMutex lock;
  GCond start, done;
  gint generation;              /* bumped for each job */
  gint busy;                    /* helpers still in the current job */
  gint quit;
  /* the current job */
  GcvCpuTaskFunc func;
  gpointer ctx;
  guint n_tasks;
  gint next_task;
};

/* A bounded spin: spin_on() gives the CPU away once and says whether
 * there is time left to spin. */
typedef struct {
  guint rounds;
  gint64 end;
} Spin;

static gboolean
spin_on (Spin * spin)
{
  sched_yield ();
  if (++spin->rounds % 16 == 0) {
    gint64 now = g_get_monotonic_time ();
    if (spin->end == 0)
      spin->end = now + SPIN_US;
    else if (now > spin->end)
      return FALSE;
  }
  return TRUE;
}

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
  gint seen = 0;

  for (;;) {
    Spin spin = { 0 };
    while (!g_atomic_int_get (&pool->quit)
        && g_atomic_int_get (&pool->generation) == seen)
      if (!spin_on (&spin)) {
        g_mutex_lock (&pool->lock);
        while (!g_atomic_int_get (&pool->quit)
            && g_atomic_int_get (&pool->generation) == seen)
          g_cond_wait (&pool->start, &pool->lock);
        g_mutex_unlock (&pool->lock);
      }
    if (g_atomic_int_get (&pool->quit))
      break;
    seen = g_atomic_int_get (&pool->generation);
    work (pool, h->worker);
    if (g_atomic_int_dec_and_test (&pool->busy)) {
      /* under the lock, so that a caller about to sleep sees it */
      g_mutex_lock (&pool->lock);
      g_cond_signal (&pool->done);
      g_mutex_unlock (&pool->lock);
    }
  }
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
    GError *err = NULL;

    h->pool = pool;
    h->worker = i;
    /* A thread that cannot be had (no memory for its stack) leaves fewer
     * workers: slower frames, not an abort. No work has been handed out
     * yet, so the count can still shrink. */
    pool->threads[i - 1] = g_thread_try_new ("gcv-cpu", helper_main, h, &err);
    if (!pool->threads[i - 1]) {
      g_free (h);
      g_clear_error (&err);
      pool->n_workers = i;
      break;
    }
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
  Spin spin = { 0 };

  if (pool->n_workers == 1 || n_tasks <= 1) {
    for (guint t = 0; t < n_tasks; t++)
      func (ctx, t, 0);
    return;
  }
  /* helpers are all waiting for the next generation: the job is theirs to
   * read once it is bumped */
  pool->func = func;
  pool->ctx = ctx;
  pool->n_tasks = n_tasks;
  g_atomic_int_set (&pool->next_task, 0);
  g_atomic_int_set (&pool->busy, pool->n_workers - 1);
  g_mutex_lock (&pool->lock);
  g_atomic_int_inc (&pool->generation);
  g_cond_broadcast (&pool->start);
  g_mutex_unlock (&pool->lock);

  work (pool, 0);

  while (g_atomic_int_get (&pool->busy) > 0)
    if (!spin_on (&spin)) {
      g_mutex_lock (&pool->lock);
      while (g_atomic_int_get (&pool->busy) > 0)
        g_cond_wait (&pool->done, &pool->lock);
      g_mutex_unlock (&pool->lock);
    }
}

void
gcv_cpu_pool_free (GcvCpuPool * pool)
{
  if (!pool)
    return;
  g_mutex_lock (&pool->lock);
  g_atomic_int_set (&pool->quit, 1);
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
