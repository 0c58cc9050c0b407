/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA backend's plans: made with their slots, set up again for each
 * filter (what runs, the FFT set-up, the slots' buffers), freed; a slot's
 * stream and device input for the application. */
#include "gcv-cuda-private.h"

gboolean
gcv_cuda_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  CudaPlan *cp = state;

  gcv_cuda_fault_read ();
  if (!CHECK (cuda_enter (cp->engine), OP_OTHER))
    return FALSE;
  /* Frames in flight keep their taps (passed with each launch) and their
   * buffers, unless these are remade: an FFT set-up is
   * (gcv_cuda_fft_setup_ensure() waits for those), and so are slot buffers
   * too small for the new halo (gcv_cuda_ensure_buffers() waits for
   * those). */
  gcv_cuda_choose_formats (cp, plan);
  if (!gcv_cuda_choose_variant (cp, plan, error))
    return FALSE;
  cp->filter_serial++;
  return gcv_cuda_ensure_buffers (cp, plan, error);
}

void
gcv_cuda_plan_free (gpointer state)
{
  CudaPlan *cp = state;

  cuda_enter (cp->engine);
  gcv_cuda_fft_setup_free (cp);
  g_free (cp->run_taps);
  gcv_cuda_slots_free (cp);
  gcv_region_split_clear (&cp->split);
  g_free (cp);
}

gpointer
gcv_cuda_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  CudaPlan *cp = g_new0 (CudaPlan, 1);

  cp->engine = engine;
  cp->plan = plan;
  cp->n_slots = plan->n_slots;
  cp->slots = g_new0 (CudaSlot, cp->n_slots);
  gcv_region_split_init (&cp->split);
  if (!CHECK (cuda_enter (cp->engine), OP_OTHER)
      || !gcv_cuda_slots_create (cp, error)
      || !gcv_cuda_plan_set_filter (cp, plan, error)) {
    gcv_cuda_plan_free (cp);
    return NULL;
  }
  return cp;
}

gpointer
gcv_cuda_get_stream (gpointer state, guint slot)
{
  return ((CudaPlan *) state)->slots[slot].stream;
}

gboolean
gcv_cuda_get_device_input (gpointer state, guint slot, GcvImage * img)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];
  const GcvFilter *f = cp->plan->filter;
  GError *err = NULL, **error = &err;

  /* a copy-only plan makes its input buffers when asked (usable from any
   * stream, as gcv_cuda_ensure_buffers() leaves them) */
  if (!gcv_cuda_slot_has (cp, s, BUF_INPUT)
      && (!CHECK (cuda_enter (cp->engine), OP_OTHER)
          || !gcv_cuda_slot_ensure (cp, s, BUF_INPUT, error)
          || !CHECK (cudaStreamSynchronize (s->stream), OP_OTHER))) {
    g_warning ("no device input for slot %u: %s", slot, err->message);
    g_error_free (err);
    return FALSE;
  }
  /* the frame lands where upload() (gcv-cuda-frame.c) would put it */
  if (cp->unpack || cp->widen) {
    img->data = s->d_raw;
    img->stride = cp->raw_pitch;
  } else {
    img->data = (guint8 *) s->d_pad + f->ay * cp->pad_pitch
        + f->ax * gcv_cuda_pixel_size (cp->pix);
    img->stride = cp->pad_pitch;
  }
  img->on_device = TRUE;
  return TRUE;
}
