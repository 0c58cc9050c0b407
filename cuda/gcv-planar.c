/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NV12, I420 and P010_10LE frames: a plan kind (GcvBackend,
 * gcv-backend.h) that runs each plane of a frame as a frame of one plane
 * through the engine's backend: GRAY8, or for P010_10LE the internal
 * GCV_FORMAT_P010_PLANE (16-bit samples, 10 bits high; gcv-format.h).
 *
 * Y goes through a plane of the frame's size, to GRAY8 or GRAY32F (P010:
 * GRAY16_LE or GRAY32F). Where the output is the frame's format too, U and V each go through a plane of the
 * chroma size, with the filter (planes=all) or the 1x1 identity
 * (planes=luma: a copy). NV12's and P010's U and V are interleaved in one
 * plane; each is read and written two samples apart (a sample step of 2
 * or 4 bytes), so the two
 * planes fill alternate bytes of the same rows: device frames reach the
 * backend with the step, host frames packed here. Copied (planes=luma),
 * they go as one: the pairs plane, the interleaved plane as a plane of
 * twice the chroma width, its packed rows copied whole. The planes of a
 * frame run in the frame's slot, and the frame is done when all of them
 * are.
 *
 * gcv-plan.c calls these through the table like a backend's; each plane
 * is a GcvPlan as the backend sees it (its geometry, filter, family,
 * forced variant and record), made and changed here. The frame's record
 * is the Y plane's; its text, gcv_choice_describe_planes(), names what U
 * and V run too. */
#include "gcv-private.h"
#include "gcv-backend.h"
#include "gcv-format.h"
#include "gcv-regions.h"
#include "gcv-tools.h"
#include "dispatch/gcv-choice.h"

#include <string.h>

#define N_PLANES 3

/* A host frame's plane with a sample step, packed for the backend. */
typedef struct {
  guint8 *in, *out;             /* packed input and output, grown as needed */
  gsize in_size, out_size;
  GcvImage unpacked_out;        /* where the output goes once done */
  guint out_step;
  gboolean out_pending;
} StepBuffers;

/* The frame in a slot: the plans it runs (Y first), how many of those
 * are submitted, and how many took statistics. */
typedef struct {
  GcvPlan *runs[N_PLANES];
  guint submitted;
  guint with_stats;
  GcvFrameOptions options;      /* set_frame_options()'s, for the submit */
  StepBuffers steps[N_PLANES];
} SlotFrame;

typedef struct {
  GcvEngine *engine;
  GcvPlan *planes[N_PLANES];    /* Y, U, V; U and V NULL to GRAY8/GRAY32F */
  GcvPlan *pairs;               /* NV12's and P010's U and V copied as one */
  GcvFilter *identity;          /* what planes=luma runs on U and V */
  guint n_slots;
  SlotFrame *slots;
} Planar;

/* --- planes -------------------------------------------------------------- */

static void
plane_free (GcvPlan * plane)
{
  if (!plane)
    return;
  if (plane->state)
    plane->kind->plan_free (plane->state);
  gcv_filter_free (plane->filter);
  g_free (plane->forced_variant);
  g_free (plane);
}

static GcvPlan *
plane_new (const GcvPlan * plan, const GcvGeometry * geometry,
    const GcvFilter * filter, GcvFamily family, const gchar * variant,
    GError ** error)
{
  GcvPlan *plane = g_new0 (GcvPlan, 1);

  plane->engine = plan->engine;
  plane->kind = plan->engine->backend;
  plane->geometry = *geometry;
  plane->filter = gcv_filter_copy (filter);
  plane->requested = family;
  plane->forced_variant = g_strdup (variant);
  plane->n_slots = plan->n_slots;
  plane->state = plane->kind->plan_new (plan->engine->state, plane, error);
  if (!plane->state) {
    plane_free (plane);
    return NULL;
  }
  return plane;
}

/* The plane runs `filter`; on failure it keeps what it had. */
static gboolean
plane_set_filter (GcvPlan * plane, const GcvFilter * filter,
    GcvFamily family, const gchar * variant, GError ** error)
{
  GcvFilter *old = plane->filter;
  GcvFamily old_family = plane->requested;
  gchar *old_variant = plane->forced_variant;
  const GcvChoice old_choice = plane->choice;

  if (family == old_family && g_strcmp0 (variant, old_variant) == 0
      && gcv_filter_equal (filter, old))
    return TRUE;
  plane->filter = gcv_filter_copy (filter);
  plane->requested = family;
  plane->forced_variant = g_strdup (variant);
  if (!plane->kind->plan_set_filter (plane->state, plane, error)) {
    gcv_filter_free (plane->filter);
    g_free (plane->forced_variant);
    plane->filter = old;
    plane->requested = old_family;
    plane->forced_variant = old_variant;
    plane->choice = old_choice;
    return FALSE;
  }
  gcv_filter_free (old);
  g_free (old_variant);
  return TRUE;
}

/* U and V: the filter (planes=all) or the copy (planes=luma), which is the
 * same whatever the family or variant asked for. */
static const GcvFilter *
chroma_filter (Planar * p, const GcvFilter * filter)
{
  return filter->planes == GCV_PLANES_ALL ? filter : p->identity;
}

static GcvFamily
chroma_family (const GcvFilter * filter, GcvFamily family)
{
  return filter->planes == GCV_PLANES_ALL ? family : GCV_FAMILY_AUTO;
}

static const gchar *
chroma_variant (const GcvFilter * filter, const gchar * variant)
{
  return filter->planes == GCV_PLANES_ALL ? variant : NULL;
}

/* Every plane to `filter`, `family` and `variant`; on failure every plane
 * goes back to what it had (which set up before). */
static gboolean
planes_set_filter (Planar * p, const GcvFilter * filter, GcvFamily family,
    const gchar * variant, GError ** error)
{
  GcvFilter *previous = gcv_filter_copy (p->planes[0]->filter);
  GcvFamily previous_family = p->planes[0]->requested;
  gchar *previous_variant = g_strdup (p->planes[0]->forced_variant);
  gboolean ok = plane_set_filter (p->planes[0], filter, family, variant,
      error);

  for (guint i = 1; ok && i < N_PLANES && p->planes[i]; i++)
    ok = plane_set_filter (p->planes[i], chroma_filter (p, filter),
        chroma_family (filter, family), chroma_variant (filter, variant),
        error);
  if (!ok) {
    plane_set_filter (p->planes[0], previous, previous_family,
        previous_variant, NULL);
    for (guint i = 1; i < N_PLANES && p->planes[i]; i++)
      plane_set_filter (p->planes[i], chroma_filter (p, previous),
          chroma_family (previous, previous_family),
          chroma_variant (previous, previous_variant), NULL);
  }
  gcv_filter_free (previous);
  g_free (previous_variant);
  return ok;
}

/* What runs: the Y plane's record stands for the frame's; the text says
 * what U and V run too. */
static void
report (Planar * p, GcvPlan * plan)
{
  plan->choice = p->planes[0]->choice;
  g_free (plan->description);
  plan->description = gcv_choice_describe_planes (&p->planes[0]->choice,
      p->planes[1] ? &p->planes[1]->choice : NULL,
      plan->filter->planes == GCV_PLANES_ALL);
}

/* --- the plan kind ------------------------------------------------------- */

/* The one-plane format each plane of a frame runs as. */
static GcvFormat
plane_format_of (GcvFormat format)
{
  return format == GCV_FORMAT_P010_10LE ? GCV_FORMAT_P010_PLANE :
      GCV_FORMAT_GRAY8;
}

static void
planar_plan_free (gpointer state)
{
  Planar *p = state;

  for (guint i = 0; i < N_PLANES; i++)
    plane_free (p->planes[i]);
  plane_free (p->pairs);
  for (guint s = 0; s < p->n_slots; s++)
    for (guint i = 0; i < N_PLANES; i++) {
      gcv_engine_host_free (p->engine, p->slots[s].steps[i].in);
      gcv_engine_host_free (p->engine, p->slots[s].steps[i].out);
    }
  gcv_filter_free (p->identity);
  g_free (p->slots);
  g_free (p);
}

static gpointer
planar_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  Planar *p = g_new0 (Planar, 1);
  const GcvFormat plane_format = plane_format_of (g->in_format);
  GcvGeometry luma = { plane_format, plane_format, g->width, g->height };
  GcvFilterDesc desc;

  gcv_filter_desc_init (&desc);
  p->engine = plan->engine;
  p->identity = gcv_filter_new (&desc, NULL);
  p->n_slots = plan->n_slots;
  p->slots = g_new0 (SlotFrame, plan->n_slots);
  if (!gcv_format_is_planar (g->out_format))
    luma.out_format = g->out_format;
  p->planes[0] = plane_new (plan, &luma, plan->filter, plan->requested,
      plan->forced_variant, error);
  if (!p->planes[0])
    goto fail;
  if (gcv_format_is_planar (g->out_format)) {
    GcvGeometry chroma = { plane_format, plane_format };
    gcv_format_chroma_size (g->in_format, g->width, g->height, &chroma.width,
        &chroma.height);
    for (guint i = 1; i < N_PLANES; i++) {
      if (!(p->planes[i] = plane_new (plan, &chroma,
                  chroma_filter (p, plan->filter),
                  chroma_family (plan->filter, plan->requested),
                  chroma_variant (plan->filter, plan->forced_variant),
                  error)))
        goto fail;
      /* regions are in the frame's pixels, two to a chroma sample */
      p->planes[i]->region_plane = (GcvRegionPlane) {
        chroma.width, chroma.height, g->width, g->height, 1
      };
    }
    /* a U and V pair a sample each: the identity copies it whatever the
     * regions, so they are not given it */
    chroma.width *= 2;
    if (g->in_format != GCV_FORMAT_I420 && !(p->pairs = plane_new (plan,
                &chroma, p->identity, GCV_FAMILY_AUTO, NULL, error)))
      goto fail;
  }
  report (p, plan);
  return p;

fail:
  planar_plan_free (p);
  return NULL;
}

static gboolean
planar_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  Planar *p = state;

  if (!planes_set_filter (p, plan->filter, plan->requested,
          plan->forced_variant, error))
    return FALSE;
  report (p, plan);
  return TRUE;
}

/* Plane i (0: Y, 1: U, 2: V; 1 of `pairs`: NV12's or P010's U and V
 * plane whole) of a frame, as a one-plane image with the step between its
 * samples in bytes (0: packed). */
static GcvImage
plane_of (const GcvImage * img, GcvFormat format, guint i, gboolean pairs,
    guint * step)
{
  GcvImage plane = { img->data, img->stride, img->on_device };

  *step = 0;
  if (i == 0)
    return plane;
  if (pairs) {
    plane.data = img->chroma[0];
    plane.stride = img->chroma_stride[0];
  } else if (format != GCV_FORMAT_I420) {
    /* NV12, P010_10LE: U and V in turn, a sample each */
    const guint px = gcv_format_pixel_size (format);
    plane.data = (guint8 *) img->chroma[0] + (i - 1) * px;
    plane.stride = img->chroma_stride[0];
    *step = 2 * px;
  } else {
    plane.data = img->chroma[i - 1];
    plane.stride = img->chroma_stride[i - 1];
  }
  return plane;
}

/* Host buffers of at least `size` bytes, grown (rarely) as frames grow. */
static gboolean
ensure_host (GcvEngine * engine, guint8 ** buf, gsize * size, gsize need,
    GError ** error)
{
  guint8 *grown;

  if (*size >= need)
    return TRUE;
  if (!(grown = gcv_engine_host_alloc (engine, need, error)))
    return FALSE;
  gcv_engine_host_free (engine, *buf);
  *buf = grown;
  *size = need;
  return TRUE;
}

/* A row of samples of `px` bytes, `step` bytes apart. Inlined with `px`
 * a constant, the copy of a sample is a load and a store, not a call. */
static inline void
copy_row (guint8 * d, guint dst_step, const guint8 * s, guint src_step,
    guint px, guint width)
{
  for (guint x = 0; x < width; x++)
    memcpy (d + (gsize) x * dst_step, s + (gsize) x * src_step, px);
}

/* Samples of `px` bytes, `step` bytes apart, to or from packed rows. */
static void
copy_samples (guint8 * dst, gsize dst_stride, guint dst_step,
    const guint8 * src, gsize src_stride, guint src_step, guint px,
    guint width, guint height)
{
  for (guint y = 0; y < height; y++) {
    const guint8 *s = src + y * src_stride;
    guint8 *d = dst + y * dst_stride;
    if (px == 1)                /* NV12 */
      copy_row (d, dst_step, s, src_step, 1, width);
    else if (px == 2)           /* P010 */
      copy_row (d, dst_step, s, src_step, 2, width);
    else
      copy_row (d, dst_step, s, src_step, px, width);
  }
}

/* A host plane with a sample step is packed for the backend, which reads
 * and writes packed rows (the CUDA backend takes steps on the device).
 * `src`, `dst` and `steps` are replaced by their packed copies. */
static gboolean
pack_steps (Planar * p, const GcvGeometry * g, StepBuffers * b,
    GcvImage * src, GcvImage * dst, GcvSteps * steps, GError ** error)
{
  const guint px = gcv_format_pixel_size (g->in_format);
  const gsize row = (gsize) g->width * px, need = row * g->height;

  b->out_pending = FALSE;
  if (steps->src > px && !src->on_device) {
    if (!ensure_host (p->engine, &b->in, &b->in_size, need, error))
      return FALSE;
    copy_samples (b->in, row, px, src->data, src->stride, steps->src, px,
        g->width, g->height);
    src->data = b->in;
    src->stride = row;
    steps->src = 0;
  }
  if (steps->dst > px && !dst->on_device) {
    if (!ensure_host (p->engine, &b->out, &b->out_size, need, error))
      return FALSE;
    b->unpacked_out = *dst;
    b->out_step = steps->dst;
    dst->data = b->out;
    dst->stride = row;
    steps->dst = 0;
    b->out_pending = TRUE;
  }
  return TRUE;
}

/* The planes of the frame in `slot` submitted so far are waited for; the
 * first error is the frame's. */
static gboolean
wait_planes (Planar * p, guint slot, GError ** error)
{
  SlotFrame *frame = &p->slots[slot];
  gboolean ok = TRUE;

  for (guint i = 0; i < frame->submitted; i++) {
    GcvPlan *plane = frame->runs[i];
    StepBuffers *b = &frame->steps[i];
    if (!plane->kind->wait (plane->state, plane, slot, ok ? error : NULL)) {
      ok = FALSE;
    } else if (b->out_pending) {
      const GcvGeometry *g = &plane->geometry;
      const guint px = gcv_format_pixel_size (g->out_format);
      copy_samples (b->unpacked_out.data, b->unpacked_out.stride,
          b->out_step, b->out, (gsize) g->width * px, px, px, g->width,
          g->height);
    }
    b->out_pending = FALSE;
  }
  frame->submitted = 0;
  return ok;
}

/* The plans a frame runs, Y first, into `runs`; how many. U and V
 * filtered, or copied: as one where they are interleaved. */
static guint
frame_plans (Planar * p, GcvPlan ** runs)
{
  guint n = 0;

  runs[n++] = p->planes[0];
  if (p->pairs && p->planes[0]->filter->planes == GCV_PLANES_LUMA)
    runs[n++] = p->pairs;
  else
    for (guint i = 1; i < N_PLANES && p->planes[i]; i++)
      runs[n++] = p->planes[i];
  return n;
}

/* Planes filtered: Y alone, or Y, U and V. */
static guint
stats_planes (Planar * p, const GcvFilter * filter)
{
  return p->planes[1] && filter->planes == GCV_PLANES_ALL ? N_PLANES : 1;
}

/* The options reach each plane's backend with the plane's submit. */
static gboolean
planar_set_frame_options (gpointer state, GcvPlan * plan, guint slot,
    const GcvFrameOptions * options, GError ** error)
{
  SlotFrame *frame = &((Planar *) state)->slots[slot];

  /* none: no statistics */
  if (options)
    frame->options = *options;
  else
    memset (&frame->options, 0, sizeof (frame->options));
  return TRUE;
}

static gboolean
planar_submit (gpointer state, GcvPlan * plan, guint slot,
    const GcvImage * src, const GcvImage * dst, const GcvSteps * steps,
    GError ** error)
{
  Planar *p = state;
  SlotFrame *frame = &p->slots[slot];
  const guint n_runs = frame_plans (p, frame->runs);

  frame->submitted = 0;
  frame->with_stats = frame->options.statistics ?
      stats_planes (p, plan->filter) : 0;
  for (guint i = 0; i < n_runs; i++) {
    GcvPlan *plane = frame->runs[i];
    const gboolean pairs = plane == p->pairs;
    const GcvBackend *b = plane->kind;
    GcvSteps plane_steps;
    GcvImage in = plane_of (src, plan->geometry.in_format, i, pairs,
        &plane_steps.src);
    GcvImage out = plane_of (dst, plan->geometry.out_format, i, pairs,
        &plane_steps.dst);
    /* every plane has the frame's regions but the pairs, copied whole;
     * copied chroma (planes=luma) has no statistics */
    GcvFrameOptions options = frame->options;
    options.statistics = options.statistics && i < frame->with_stats;
    if (pairs) {
      options.region_mode = GCV_REGIONS_ALL;
      options.regions = NULL;
      options.n_regions = 0;
    }
    if (!pack_steps (p, &plane->geometry, &frame->steps[i], &in, &out,
            &plane_steps, error)
        || (b->set_frame_options && !b->set_frame_options (plane->state,
                plane, slot, &options, error))
        || !b->submit (plane->state, plane, slot, &in, &out, &plane_steps,
            error)) {
      /* the planes already on their way are waited for: the frame is off */
      wait_planes (p, slot, NULL);
      return FALSE;
    }
    frame->submitted = i + 1;
  }
  return TRUE;
}

/* The frame's input is read no more once no plane reads it. */
static gboolean
planar_input_done (gpointer state, GcvPlan * plan, guint slot,
    gboolean wait, gboolean * done, GError ** error)
{
  Planar *p = state;

  *done = TRUE;
  for (guint i = 0; i < p->slots[slot].submitted && *done; i++) {
    GcvPlan *plane = p->slots[slot].runs[i];
    *done = FALSE;
    if (plane->kind->input_done && !plane->kind->input_done (plane->state,
            plane, slot, wait, done, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
planar_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  return wait_planes (state, slot, error);
}

/* Each filtered plane's one channel is a channel of the frame's. */
static void
planar_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats)
{
  Planar *p = state;

  for (guint i = 0; i < p->slots[slot].with_stats; i++) {
    GcvPlan *plane = p->slots[slot].runs[i];
    GcvFrameStats one = { 0 };
    plane->kind->get_frame_stats (plane->state, plane, slot, &one);
    stats->channel[i] = one.channel[0];
    stats->n_channels = i + 1;
  }
}

/* The Y plane's stream stands for the frame's. */
static gpointer
planar_get_cuda_stream (gpointer state, guint slot)
{
  GcvPlan *luma = ((Planar *) state)->planes[0];
  return luma->kind->get_cuda_stream ?
      luma->kind->get_cuda_stream (luma->state, slot) : NULL;
}

/* Each plan the next frame runs has a stream of its own backend state. */
static guint
planar_get_cuda_streams (gpointer state, guint slot, gpointer * streams,
    guint n)
{
  Planar *p = state;
  GcvPlan *runs[N_PLANES];
  const guint n_runs = frame_plans (p, runs);
  guint count = 0;

  for (guint i = 0; i < n_runs; i++) {
    GcvPlan *plane = runs[i];
    gpointer stream = plane->kind->get_cuda_stream ?
        plane->kind->get_cuda_stream (plane->state, slot) : NULL;
    if (!stream)
      continue;
    if (count < n)
      streams[count] = stream;
    count++;
  }
  return count;
}

/* No device input: a frame of several planes (gcv-interop.h). */
const GcvBackend gcv_planar_kind = {
  .name = "planar",
  .plan_new = planar_plan_new,
  .plan_set_filter = planar_plan_set_filter,
  .submit = planar_submit,
  .input_done = planar_input_done,
  .wait = planar_wait,
  .plan_free = planar_plan_free,
  .get_cuda_stream = planar_get_cuda_stream,
  .get_cuda_streams = planar_get_cuda_streams,
  .set_frame_options = planar_set_frame_options,
  .get_frame_stats = planar_get_frame_stats,
};
