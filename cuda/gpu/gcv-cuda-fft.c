/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The FFT family's set-up for a CUDA plan: cuFFT's transforms, a batched
 * plan per slot (fft.cu), and the kernel's spectrum. */
#include "gcv-cuda-private.h"

#include <string.h>

/* Sets up the FFT family's transforms and kernel spectrum. They stay while
 * the frame, kernel size, channels and padding do, and the spectrum while
 * the taps do, so a bias or border change remakes neither. Frames in
 * flight use both: they finish before either changes. FALSE with `error`
 * for a CUDA failure; a set-up that cannot be made (too large for the
 * device, say) leaves cp->fft NULL and says why in `why`. */
gboolean
gcv_cuda_fft_setup_ensure (CudaPlan * cp, const GcvPlan * plan,
    const GcvCudaConv * c, const GcvVariant * v, gchar * why, gsize why_len,
    GError ** error)
{
  const GcvFilter *f = plan->filter;
  int channels = gcv_filtered_channels (plan->geometry.in_format,
      f->filter_alpha);
  int setup[7] = { c->width, c->height, (int) f->kw, (int) f->kh, channels,
    v->fft_prime, v->fft_tile
  };
  gboolean same_setup = cp->fft
      && memcmp (setup, cp->fft_setup, sizeof (setup)) == 0;

  if (same_setup && memcmp (cp->fft_taps, f->taps,
          sizeof (gfloat) * f->kw * f->kh) == 0)
    return TRUE;
  if (cp->fft && !gcv_cuda_wait_all (cp, error))
    return FALSE;
  g_clear_pointer (&cp->fft_taps, g_free);
  if (!same_setup) {
    cudaStream_t *streams = g_newa (cudaStream_t, cp->n_slots);
    for (guint i = 0; i < cp->n_slots; i++)
      streams[i] = cp->slots[i].stream;
    g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
    cp->fft = gcv_cuda_fft_new (c->width, c->height, f->kw, f->kh, channels,
        v->fft_prime, v->fft_tile, cp->n_slots, streams, why, why_len);
    memcpy (cp->fft_setup, setup, sizeof (setup));
  }
  if (cp->fft && !gcv_cuda_fft_set_filter (cp->fft, f->taps, f->kw, f->kh,
          why, why_len))
    g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
  if (cp->fft)
    cp->fft_taps = g_memdup2 (f->taps, sizeof (gfloat) * f->kw * f->kh);
  return TRUE;
}

void
gcv_cuda_fft_setup_free (CudaPlan * cp)
{
  g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
  g_clear_pointer (&cp->fft_taps, g_free);
}
