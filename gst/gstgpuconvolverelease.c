/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upstream's registered memory given back once its upload ends; see
 * gstgpuconvolverelease.h.
 *
 * A frame uploaded from memory registered where it lies
 * (gstgpuconvolvehostreg.c) must go back to upstream as soon as the upload
 * has read it: an application may have fewer buffers in its ring than
 * frames are in flight, and take the next one only once a buffer comes
 * back. Waiting for the upload on the streaming thread makes each frame's
 * submit and upload follow one another; here a thread of the element's
 * waits (the engine's wait: gcv_plan_input_done()) while the streaming
 * thread takes the next frame. Inputs are given back in the order they
 * came. The thread starts with the first input handed over. */
#include "gstgpuconvolverelease.h"
#include "gcv-interop.h"
#include "gstgpuconvolvehostreg.h"

GST_DEBUG_CATEGORY_EXTERN (gst_gpu_convolve_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_debug

typedef struct
{
  GcvPlan *plan;
  GcvTicket ticket;
  GstBuffer *buf;
  GstMapInfo map;
  gpointer reg;
  guint64 seq;
} Input;

struct _GstGpuConvolveRelease
{
  GstElement *element;
  GThread *thread;
  GAsyncQueue *inputs;          /* Input, oldest first; `quit` to end */
  GMutex lock;
  GCond given_back;
  guint64 pushed, done;         /* inputs handed over, and given back */
  GError *error;                /* a wait that failed, for input error_seq */
  guint64 error_seq;
};

/* the thread's last input */
static Input quit;

GstGpuConvolveRelease *
gst_gpu_convolve_release_new (GstElement * element)
{
  GstGpuConvolveRelease *r = g_new0 (GstGpuConvolveRelease, 1);

  r->element = element;
  r->inputs = g_async_queue_new ();
  g_mutex_init (&r->lock);
  g_cond_init (&r->given_back);
  return r;
}

static gpointer
release_thread (gpointer data)
{
  GstGpuConvolveRelease *r = data;
  Input *in;

  while ((in = g_async_queue_pop (r->inputs)) != &quit) {
    GError *error = NULL;
    gboolean done;
    const gboolean ok = gcv_plan_input_done (in->plan, in->ticket, TRUE,
        &done, &error);

    gst_buffer_unmap (in->buf, &in->map);
    gst_gpu_convolve_hostreg_release (in->reg);
    gst_buffer_unref (in->buf);
    g_mutex_lock (&r->lock);
    r->done = in->seq;
    if (!ok && !r->error) {
      r->error = g_steal_pointer (&error);
      r->error_seq = in->seq;
    }
    g_cond_broadcast (&r->given_back);
    g_mutex_unlock (&r->lock);
    g_clear_error (&error);
    g_free (in);
  }
  return NULL;
}

guint64
gst_gpu_convolve_release_push (GstGpuConvolveRelease * r, GcvPlan * plan,
    GcvTicket ticket, GstBuffer * buf, const GstMapInfo * map, gpointer reg)
{
  Input *in = g_new (Input, 1);
  guint64 seq;

  if (!r->thread) {
    GST_DEBUG_OBJECT (r->element, "registered inputs given back by a thread "
        "of their own");
    r->thread = g_thread_new ("gcv-release", release_thread, r);
  }
  in->plan = plan;
  in->ticket = ticket;
  in->buf = buf;
  in->map = *map;
  in->reg = reg;
  g_mutex_lock (&r->lock);
  seq = in->seq = ++r->pushed;
  g_mutex_unlock (&r->lock);
  g_async_queue_push (r->inputs, in);
  return seq;
}

gboolean
gst_gpu_convolve_release_wait (GstGpuConvolveRelease * r, guint64 seq,
    GError ** error)
{
  gboolean ok;

  g_mutex_lock (&r->lock);
  while (r->done < seq)
    g_cond_wait (&r->given_back, &r->lock);
  /* said once, by the frame of that input or the first after it */
  ok = !r->error || r->error_seq > seq;
  if (!ok) {
    g_propagate_error (error, r->error);
    r->error = NULL;
  }
  g_mutex_unlock (&r->lock);
  return ok;
}

void
gst_gpu_convolve_release_free (GstGpuConvolveRelease * r)
{
  if (!r)
    return;
  if (r->thread) {
    g_async_queue_push (r->inputs, &quit);
    g_thread_join (r->thread);
  }
  g_async_queue_unref (r->inputs);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->given_back);
  g_clear_error (&r->error);
  g_free (r);
}
