/* NV12 and I420 frames: one GRAY8 plan per plane, run side by side.
 *
 * Y goes through a plan of the frame's size, to GRAY8 or GRAY32F. Where
 * the output is NV12 or I420 too, U and V each go through a plan of the
 * chroma size, with the filter (planes=all) or the 1x1 identity
 * (planes=luma: a copy). NV12's U and V are interleaved in one plane; each
 * is read and written two bytes apart (a sample step of 2), so the two
 * plans fill alternate bytes of the same rows. The plans of a frame share
 * its slot, and the frame is done when all of them are. */
#include "gcv-private.h"
#include "gcv-planar.h"

#define N_PLANES 3

/* A frame in a slot: each plane's ticket, while submitted. */
typedef struct {
  GcvTicket ticket[N_PLANES];
  gboolean submitted[N_PLANES];
} SlotFrame;

struct _GcvPlanar {
  GcvPlan *planes[N_PLANES];    /* Y, U, V; U and V NULL to GRAY8/GRAY32F */
  GcvFilter *identity;          /* what planes=luma runs on U and V */
  SlotFrame *slots;
  gchar *description;
};

static const GcvFilter *
chroma_filter (GcvPlanar * p, const GcvFilter * filter)
{
  return filter->planes == GCV_PLANES_ALL ? filter : p->identity;
}

/* The copy of planes=luma is the same whatever the family asked for. */
static GcvFamily
chroma_family (const GcvFilter * filter, GcvFamily family)
{
  return filter->planes == GCV_PLANES_ALL ? family : GCV_FAMILY_AUTO;
}

static void
describe (GcvPlanar * p, const GcvFilter * filter)
{
  g_free (p->description);
  if (!p->planes[1])
    p->description = g_strdup (gcv_plan_describe (p->planes[0]));
  else if (filter->planes == GCV_PLANES_ALL)
    p->description = g_strdup_printf ("%s; U and V: %s",
        gcv_plan_describe (p->planes[0]), gcv_plan_describe (p->planes[1]));
  else
    p->description = g_strdup_printf ("%s; U and V copied",
        gcv_plan_describe (p->planes[0]));
}

void
gcv_planar_free (GcvPlanar * p)
{
  if (!p)
    return;
  for (guint i = 0; i < N_PLANES; i++)
    gcv_plan_free (p->planes[i]);
  gcv_filter_free (p->identity);
  g_free (p->slots);
  g_free (p->description);
  g_free (p);
}

GcvPlanar *
gcv_planar_new (GcvPlan * plan, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  GcvPlanar *p = g_new0 (GcvPlanar, 1);
  GcvGeometry luma = { GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY8, g->width,
    g->height
  };
  GcvFilterDesc desc;

  gcv_filter_desc_init (&desc);
  p->identity = gcv_filter_new (&desc, NULL);
  p->slots = g_new0 (SlotFrame, plan->n_slots);
  if (!gcv_format_is_planar (g->out_format))
    luma.out_format = g->out_format;
  p->planes[0] = gcv_plan_new (plan->engine, &luma, plan->filter,
      plan->requested, plan->n_slots, error);
  if (!p->planes[0])
    goto fail;
  if (gcv_format_is_planar (g->out_format)) {
    GcvGeometry chroma = { GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY8 };
    gcv_format_chroma_size (g->in_format, g->width, g->height, &chroma.width,
        &chroma.height);
    for (guint i = 1; i < N_PLANES; i++)
      if (!(p->planes[i] = gcv_plan_new (plan->engine, &chroma,
                  chroma_filter (p, plan->filter),
                  chroma_family (plan->filter, plan->requested),
                  plan->n_slots, error)))
        goto fail;
  }
  describe (p, plan->filter);
  return p;

fail:
  gcv_planar_free (p);
  return NULL;
}

gboolean
gcv_planar_set_filter (GcvPlanar * p, GcvPlan * plan, GError ** error)
{
  GcvFilter *previous = gcv_filter_copy (p->planes[0]->filter);
  GcvFamily previous_family = p->planes[0]->requested;
  gboolean ok = gcv_plan_set_filter (p->planes[0], plan->filter,
      plan->requested, error);

  for (guint i = 1; ok && i < N_PLANES && p->planes[i]; i++)
    ok = gcv_plan_set_filter (p->planes[i], chroma_filter (p, plan->filter),
        chroma_family (plan->filter, plan->requested), error);
  if (!ok) {
    /* the planes go back to the filter they had (which set up before) */
    gcv_plan_set_filter (p->planes[0], previous, previous_family, NULL);
    for (guint i = 1; i < N_PLANES && p->planes[i]; i++)
      gcv_plan_set_filter (p->planes[i], chroma_filter (p, previous),
          chroma_family (previous, previous_family), NULL);
  } else {
    describe (p, plan->filter);
  }
  gcv_filter_free (previous);
  return ok;
}

gboolean
gcv_planar_set_variant (GcvPlanar * p, const gchar * variant,
    const GcvFilter * filter, GError ** error)
{
  if (!gcv_plan_set_variant (p->planes[0], variant, error))
    return FALSE;
  for (guint i = 1; i < N_PLANES && p->planes[i]; i++)
    if (filter->planes == GCV_PLANES_ALL
        && !gcv_plan_set_variant (p->planes[i], variant, error))
      return FALSE;
  describe (p, filter);
  return TRUE;
}

/* Plane i (0: Y, 1: U, 2: V) of a frame, as a GRAY8 image with the step
 * between its samples. */
static GcvImage
plane_of (const GcvImage * img, GcvFormat format, guint i, guint * step)
{
  GcvImage plane = { img->data, img->stride, img->on_device };

  *step = 0;
  if (i == 0)
    return plane;
  if (format == GCV_FORMAT_NV12) {
    plane.data = (guint8 *) img->chroma[0] + (i - 1);
    plane.stride = img->chroma_stride[0];
    *step = 2;
  } else {
    plane.data = img->chroma[i - 1];
    plane.stride = img->chroma_stride[i - 1];
  }
  return plane;
}

static void
wait_planes (GcvPlanar * p, guint slot)
{
  for (guint i = 0; i < N_PLANES; i++)
    if (p->slots[slot].submitted[i]) {
      p->slots[slot].submitted[i] = FALSE;
      gcv_plan_wait (p->planes[i], p->slots[slot].ticket[i], NULL);
    }
}

guint
gcv_planar_stats_channels (GcvPlanar * p, const GcvFilter * filter)
{
  return p->planes[1] && filter->planes == GCV_PLANES_ALL ? N_PLANES : 1;
}

gboolean
gcv_planar_submit (GcvPlanar * p, GcvPlan * plan, guint slot,
    const GcvImage * src, const GcvImage * dst,
    const GcvFrameOptions * options, GError ** error)
{
  guint with_stats = gcv_planar_stats_channels (p, plan->filter);

  for (guint i = 0; i < N_PLANES && p->planes[i]; i++) {
    GcvSteps steps;
    GcvImage in = plane_of (src, plan->geometry.in_format, i, &steps.src);
    GcvImage out = plane_of (dst, plan->geometry.out_format, i, &steps.dst);
    /* copied chroma (planes=luma) has no statistics */
    if (!gcv_plan_submit_steps (p->planes[i], &in, &out, &steps,
            i < with_stats ? options : NULL, &p->slots[slot].ticket[i],
            error)) {
      /* the planes already on their way are waited for: the frame is off */
      wait_planes (p, slot);
      return FALSE;
    }
    p->slots[slot].submitted[i] = TRUE;
  }
  return TRUE;
}

gboolean
gcv_planar_wait (GcvPlanar * p, guint slot, GcvFrameStats * stats,
    GError ** error)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < N_PLANES; i++)
    if (p->slots[slot].submitted[i]) {
      GcvFrameStats plane = { 0 };
      p->slots[slot].submitted[i] = FALSE;
      /* every plane is waited for; the first error is the frame's */
      if (!gcv_plan_wait_stats (p->planes[i], p->slots[slot].ticket[i],
              &plane, ok ? error : NULL))
        ok = FALSE;
      /* each plane's one channel is a channel of the frame's */
      if (stats && plane.n_channels == 1) {
        stats->channel[i] = plane.channel[0];
        stats->n_channels = i + 1;
      }
    }
  return ok;
}

GcvPlan *
gcv_planar_luma (GcvPlanar * p)
{
  return p->planes[0];
}

GcvPlan *
gcv_planar_plane (GcvPlanar * p, guint i)
{
  return i < N_PLANES ? p->planes[i] : NULL;
}

const gchar *
gcv_planar_describe (GcvPlanar * p)
{
  return p->description;
}
