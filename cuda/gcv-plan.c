/* Engines and plans: argument checks, then the chosen backend does the work. */
#include "gcv-private.h"
#include "dispatch/gcv-dispatch.h"
#include "gcv-planar.h"
#include "dispatch/gcv-tuning.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static const GcvBackend *
backend_for (GcvBackendKind kind)
{
  return kind == GCV_BACKEND_CPU ? &gcv_cpu_backend : gcv_cuda_backend_get ();
}

gboolean
gcv_backend_available (GcvBackendKind kind, gint device_id, GError ** error)
{
  const GcvBackend *b;

  if (kind == GCV_BACKEND_AUTO)
    return gcv_backend_available (GCV_BACKEND_CUDA, device_id, NULL)
        || gcv_backend_available (GCV_BACKEND_CPU, device_id, error);
  b = backend_for (kind);
  if (!b) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
        "this build of gpuconvolve has no CUDA backend");
    return FALSE;
  }
  return b->available (device_id, error);
}

static GcvEngine *
engine_new (const GcvBackend * b, gint device_id, gpointer context,
    GError ** error)
{
  GcvEngine *e;
  gpointer state;

  if (!(state = b->engine_new (device_id, context, error)))
    return NULL;
  e = g_new0 (GcvEngine, 1);
  e->backend = b;
  e->state = state;
  return e;
}

GcvEngine *
gcv_engine_new (GcvBackendKind kind, gint device_id, GError ** error)
{
  if (kind == GCV_BACKEND_AUTO)
    kind = gcv_backend_available (GCV_BACKEND_CUDA, device_id, NULL) ?
        GCV_BACKEND_CUDA : GCV_BACKEND_CPU;
  if (!gcv_backend_available (kind, device_id, error))
    return NULL;
  return engine_new (backend_for (kind), device_id, NULL, error);
}

GcvEngine *
gcv_engine_new_for_context (gpointer cu_context, GError ** error)
{
  const GcvBackend *b = gcv_cuda_backend_get ();

  if (!b || !cu_context) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE, "%s",
        b ? "no CUDA context given" :
        "this build of gpuconvolve has no CUDA backend");
    return NULL;
  }
  return engine_new (b, -1, cu_context, error);
}

GcvBackendKind
gcv_engine_get_backend (GcvEngine * engine)
{
  return engine->backend == &gcv_cpu_backend ? GCV_BACKEND_CPU :
      GCV_BACKEND_CUDA;
}

gint
gcv_engine_get_device (GcvEngine * engine)
{
  return engine->backend->engine_device ?
      engine->backend->engine_device (engine->state) : -1;
}

gboolean
gcv_engine_set_tuning_file (GcvEngine * engine, const gchar * path,
    GError ** error)
{
  GcvTuningTable *t;

  if (engine->backend->set_tuning_file)
    return engine->backend->set_tuning_file (engine->state, path, error);
  /* no dispatcher here, but a broken file is still worth saying */
  if (!path || !*path)
    return TRUE;
  t = gcv_tuning_table_load (path, error);
  gcv_tuning_table_free (t);
  return t != NULL;
}

const gchar *
gcv_engine_describe (GcvEngine * engine)
{
  return engine->backend->engine_describe (engine->state);
}

void
gcv_engine_free (GcvEngine * engine)
{
  if (!engine)
    return;
  engine->backend->engine_free (engine->state);
  g_free (engine);
}

void
gcv_engine_interrupt (GcvEngine * engine, gboolean on)
{
  g_return_if_fail (engine != NULL);
  if (engine->backend->engine_interrupt)
    engine->backend->engine_interrupt (engine->state, on);
}

void
gcv_plan_set_description (GcvPlan * plan, GcvFamily family,
    const gchar * format, ...)
{
  va_list args;
  gchar *params;

  va_start (args, format);
  params = g_strdup_vprintf (format, args);
  va_end (args);
  g_free (plan->description);
  plan->choice.variant.family = family;
  plan->description = g_strdup_printf ("%s%s%s", gcv_family_nick (family),
      *params ? " " : "", params);
  g_free (params);
}

/* Around a backend's plan_new or plan_set_filter: the backend leaves what
 * runs in plan->choice, and the description is written from that record
 * (gcv_choice_describe()) once it succeeds; a backend that still writes
 * its own (gcv_plan_set_description()) keeps it. On failure the plan
 * keeps its description. */
static gchar *
description_begin (GcvPlan * plan)
{
  gchar *old = plan->description;

  plan->description = NULL;
  return old;
}

static gboolean
description_end (GcvPlan * plan, gchar * old, gboolean ok)
{
  if (!ok) {
    g_free (plan->description);
    plan->description = old;
    return FALSE;
  }
  g_free (old);
  if (!plan->description)
    plan->description = gcv_choice_describe (&plan->choice);
  return TRUE;
}

static gboolean
check_geometry (const GcvGeometry * g, GError ** error)
{
  gboolean gray_out = g->out_format == GCV_FORMAT_GRAY8
      || g->out_format == GCV_FORMAT_GRAY32F;
  /* GRAY8 and GRAY32F into each other; NV12 and I420 into their luma */
  gboolean gray_pair = gray_out && (g->in_format == GCV_FORMAT_GRAY8
      || g->in_format == GCV_FORMAT_GRAY32F
      || gcv_format_is_planar (g->in_format));

  if (g->width < 1 || g->height < 1 || g->width > GCV_MAX_FRAME_SIZE
      || g->height > GCV_MAX_FRAME_SIZE) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "frame size %ux%u is outside 1x1..%dx%d", g->width, g->height,
        GCV_MAX_FRAME_SIZE, GCV_MAX_FRAME_SIZE);
    return FALSE;
  }
  if (g->in_format != g->out_format && !gray_pair) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "cannot convert %s to %s", gcv_format_name (g->in_format),
        gcv_format_name (g->out_format));
    return FALSE;
  }
  return TRUE;
}

guint
gcv_engine_frames_in_flight (GcvEngine * engine, guint wanted)
{
  /* the CPU backend has finished a frame when its submit returns */
  return engine->backend == &gcv_cpu_backend ? 1 : MAX (wanted, 1);
}

static void
plan_free_fields (GcvPlan * plan)
{
  for (guint i = 0; plan->steps && i < plan->n_slots; i++) {
    gcv_engine_host_free (plan->engine, plan->steps[i].in);
    gcv_engine_host_free (plan->engine, plan->steps[i].out);
  }
  g_free (plan->steps);
  g_free (plan->slot_ticket);
  g_free (plan->slot_busy);
  g_free (plan->slot_stats);
  g_free (plan->forced_variant);
  gcv_filter_free (plan->filter);
  g_free (plan->description);
  g_free (plan);
}

GcvPlan *
gcv_plan_new (GcvEngine * engine, const GcvGeometry * geometry,
    const GcvFilter * filter, GcvFamily family, guint in_flight,
    GError ** error)
{
  GcvPlan *plan;

  g_return_val_if_fail (engine && geometry && filter, NULL);
  if (!check_geometry (geometry, error))
    return NULL;
  plan = g_new0 (GcvPlan, 1);
  plan->engine = engine;
  plan->geometry = *geometry;
  plan->filter = gcv_filter_copy (filter);
  plan->requested = family;
  plan->n_slots = gcv_engine_frames_in_flight (engine, in_flight);
  plan->slot_ticket = g_new0 (GcvTicket, plan->n_slots);
  plan->slot_busy = g_new0 (gboolean, plan->n_slots);
  plan->slot_stats = g_new0 (gboolean, plan->n_slots);
  if (gcv_format_is_planar (geometry->in_format))
    plan->planar = gcv_planar_new (plan, error);
  else {
    gchar *old = description_begin (plan);
    plan->state = engine->backend->plan_new (engine->state, plan, error);
    description_end (plan, old, plan->state != NULL);
  }
  if (!plan->state && !plan->planar) {
    plan_free_fields (plan);
    return NULL;
  }
  return plan;
}

gboolean
gcv_plan_set_filter (GcvPlan * plan, const GcvFilter * filter,
    GcvFamily family, GError ** error)
{
  GcvFilter *old = plan->filter;
  GcvFamily old_requested = plan->requested;
  gchar *old_description;

  if (family == plan->requested && gcv_filter_equal (filter, plan->filter))
    return TRUE;
  plan->filter = gcv_filter_copy (filter);
  plan->requested = family;
  old_description = plan->planar ? NULL : description_begin (plan);
  if (plan->planar ? !gcv_planar_set_filter (plan->planar, plan, error)
      : !description_end (plan, old_description,
          plan->engine->backend->plan_set_filter (plan->state, plan,
              error))) {
    gcv_filter_free (plan->filter);
    plan->filter = old;
    plan->requested = old_requested;
    return FALSE;
  }
  gcv_filter_free (old);
  return TRUE;
}

gboolean
gcv_plan_set_variant (GcvPlan * plan, const gchar * variant, GError ** error)
{
  GcvVariant v;
  gchar *old = plan->forced_variant, *old_description;

  if (variant && !gcv_variant_parse (variant, &v, error))
    return FALSE;
  if (plan->planar)
    return gcv_planar_set_variant (plan->planar, variant, plan->filter, error);
  plan->forced_variant = g_strdup (variant);
  old_description = description_begin (plan);
  if (!description_end (plan, old_description,
          plan->engine->backend->plan_set_filter (plan->state, plan,
              error))) {
    g_free (plan->forced_variant);
    plan->forced_variant = old;
    return FALSE;
  }
  g_free (old);
  return TRUE;
}

/* Bytes a row of `width` samples spans with a sample step. */
static gsize
row_span (guint width, gsize pixel, guint step)
{
  return step > 1 ? (gsize) (width - 1) * step + 1 : (gsize) width * pixel;
}

/* A plane must hold every row it claims, and rows must not overlap. */
static gboolean
check_plane (gpointer data, gsize stride, gsize row, const gchar * what,
    const gchar * plane, GError ** error)
{
  if (!data) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "%s frame has no %sdata",
        what, plane);
    return FALSE;
  }
  if (stride < row) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "%s %sstride %" G_GSIZE_FORMAT " is smaller than a row of %"
        G_GSIZE_FORMAT " bytes", what, plane, stride, row);
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_image (GcvPlan * plan, const GcvImage * img, GcvFormat format,
    guint step, const gchar * what, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  guint cw, ch;

  if (!img) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "no %s frame", what);
    return FALSE;
  }
  if (step > 1 && format != GCV_FORMAT_GRAY8) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "%s frame has a sample "
        "step of %u, which only GRAY8 frames may have", what, step);
    return FALSE;
  }
  if (!check_plane (img->data, img->stride, row_span (g->width,
              gcv_format_pixel_size (format), step), what, "", error))
    return FALSE;
  if (gcv_format_chroma_size (format, g->width, g->height, &cw, &ch)) {
    /* NV12: one plane of U and V pairs; I420: U, then V */
    if (!check_plane (img->chroma[0], img->chroma_stride[0],
            format == GCV_FORMAT_NV12 ? 2 * (gsize) cw : cw, what,
            format == GCV_FORMAT_NV12 ? "UV plane " : "U plane ", error)
        || (format == GCV_FORMAT_I420 && !check_plane (img->chroma[1],
                img->chroma_stride[1], cw, what, "V plane ", error)))
      return FALSE;
  }
  if (img->on_device && gcv_engine_get_backend (plan->engine)
      != GCV_BACKEND_CUDA) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "%s frame is in device memory but the engine runs on the CPU", what);
    return FALSE;
  }
  return TRUE;
}

/* Host buffers of at least `size` bytes, grown (rarely) as frames grow. */
static gboolean
ensure_host (GcvPlan * plan, guint8 ** buf, gsize * size, gsize need,
    GError ** error)
{
  guint8 *grown;

  if (*size >= need)
    return TRUE;
  if (!(grown = gcv_engine_host_alloc (plan->engine, need, error)))
    return FALSE;
  gcv_engine_host_free (plan->engine, *buf);
  *buf = grown;
  *size = need;
  return TRUE;
}

/* Samples `step` bytes apart to or from packed rows. */
static void
copy_samples (guint8 * dst, gsize dst_stride, guint dst_step,
    const guint8 * src, gsize src_stride, guint src_step, guint width,
    guint height)
{
  for (guint y = 0; y < height; y++) {
    const guint8 *s = src + y * src_stride;
    guint8 *d = dst + y * dst_stride;
    for (guint x = 0; x < width; x++)
      d[(gsize) x * dst_step] = s[(gsize) x * src_step];
  }
}

/* Host frames with a sample step are packed for the backends, which read
 * and write packed rows (the CUDA backend takes steps on the device).
 * `src`, `dst` and `steps` are replaced by their packed copies. */
static gboolean
pack_steps (GcvPlan * plan, guint slot, GcvImage * src, GcvImage * dst,
    GcvSteps * steps, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  gboolean in = steps->src > 1 && !src->on_device;
  gboolean out = steps->dst > 1 && !dst->on_device;
  GcvStepBuffers *b;

  if (!in && !out)
    return TRUE;
  if (!plan->steps)
    plan->steps = g_new0 (GcvStepBuffers, plan->n_slots);
  b = &plan->steps[slot];
  if (in) {
    if (!ensure_host (plan, &b->in, &b->in_size, (gsize) g->width * g->height,
            error))
      return FALSE;
    copy_samples (b->in, g->width, 1, src->data, src->stride, steps->src,
        g->width, g->height);
    src->data = b->in;
    src->stride = g->width;
    steps->src = 0;
  }
  if (out) {
    if (!ensure_host (plan, &b->out, &b->out_size,
            (gsize) g->width * g->height, error))
      return FALSE;
    b->unpacked_out = *dst;
    b->out_step = steps->dst;
    dst->data = b->out;
    dst->stride = g->width;
    steps->dst = 0;
  }
  return TRUE;
}

void
gcv_frame_options_init (GcvFrameOptions * options)
{
  memset (options, 0, sizeof (*options));
}

/* The ring of slots: ticket t runs in slot t % capacity, which must have
 * been waited for since its last frame. */
gboolean
gcv_plan_submit (GcvPlan * plan, const GcvImage * src, const GcvImage * dst,
    GcvTicket * ticket, GError ** error)
{
  return gcv_plan_submit_steps (plan, src, dst, NULL, NULL, ticket, error);
}

gboolean
gcv_plan_submit_with (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, const GcvFrameOptions * options,
    GcvTicket * ticket, GError ** error)
{
  return gcv_plan_submit_steps (plan, src, dst, NULL, options, ticket, error);
}

/* Options a frame may ask for: refused here, before any work is queued. */
static gboolean
check_options (GcvPlan * plan, const GcvFrameOptions * options,
    GError ** error)
{
  if (!options || !options->statistics)
    return TRUE;
  if (!(options->statistics_threshold >= 0.0)
      || isinf (options->statistics_threshold)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "statistics "
        "threshold %g is not a finite value >= 0",
        options->statistics_threshold);
    return FALSE;
  }
  if (!plan->planar && !plan->engine->backend->set_frame_options) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "the %s backend has "
        "no per-frame statistics", plan->engine->backend->name);
    return FALSE;
  }
  return TRUE;
}

gboolean
gcv_plan_submit_steps (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps,
    const GcvFrameOptions * options, GcvTicket * ticket, GError ** error)
{
  const GcvBackend *b = plan ? plan->engine->backend : NULL;
  GcvSteps packed = { 0, 0 };
  guint slot;

  g_return_val_if_fail (plan && ticket, FALSE);
  slot = plan->next_ticket % plan->n_slots;
  if (plan->slot_busy[slot]) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "the plan holds %u "
        "frame(s) in flight already: wait for the oldest first",
        plan->n_slots);
    return FALSE;
  }
  if (steps)
    packed = *steps;
  if (!check_image (plan, src, plan->geometry.in_format, packed.src, "input",
          error)
      || !check_image (plan, dst, plan->geometry.out_format, packed.dst,
          "output", error)
      || !check_options (plan, options, error))
    return FALSE;
  if (plan->planar) {
    if (!gcv_planar_submit (plan->planar, plan, slot, src, dst, options,
            error))
      return FALSE;
  } else {
    GcvImage in = *src, out = *dst;
    if (!pack_steps (plan, slot, &in, &out, &packed, error)
        || (b->set_frame_options && !b->set_frame_options (plan->state, plan,
                slot, options, error))
        || !b->submit (plan->state, plan, slot, &in, &out, &packed, error))
      return FALSE;
    if (plan->steps)
      plan->steps[slot].out_pending = out.data != dst->data;
  }
  plan->slot_stats[slot] = options && options->statistics;
  plan->slot_busy[slot] = TRUE;
  plan->slot_ticket[slot] = *ticket = plan->next_ticket++;
  return TRUE;
}

gboolean
gcv_plan_wait (GcvPlan * plan, GcvTicket ticket, GError ** error)
{
  return gcv_plan_wait_stats (plan, ticket, NULL, error);
}

gboolean
gcv_plan_wait_stats (GcvPlan * plan, GcvTicket ticket, GcvFrameStats * stats,
    GError ** error)
{
  GcvFrameStats none = { 0 };
  gboolean asked;
  guint slot;

  g_return_val_if_fail (plan, FALSE);
  slot = ticket % plan->n_slots;
  g_return_val_if_fail (plan->slot_busy[slot]
      && plan->slot_ticket[slot] == ticket, FALSE);
  plan->slot_busy[slot] = FALSE;
  asked = plan->slot_stats[slot];
  if (!stats)
    stats = &none;
  stats->n_channels = 0;
  if (plan->planar)
    return gcv_planar_wait (plan->planar, slot, asked ? stats : NULL, error);
  if (!plan->engine->backend->wait (plan->state, plan, slot, error))
    return FALSE;
  if (plan->steps && plan->steps[slot].out_pending) {
    GcvStepBuffers *b = &plan->steps[slot];
    const GcvGeometry *g = &plan->geometry;
    b->out_pending = FALSE;
    copy_samples (b->unpacked_out.data, b->unpacked_out.stride, b->out_step,
        b->out, g->width, 1, g->width, g->height);
  }
  if (asked)
    plan->engine->backend->get_frame_stats (plan->state, plan, slot, stats);
  return TRUE;
}

gboolean
gcv_plan_run (GcvPlan * plan, const GcvImage * src, const GcvImage * dst,
    GError ** error)
{
  GcvTicket ticket;

  return gcv_plan_submit (plan, src, dst, &ticket, error)
      && gcv_plan_wait (plan, ticket, error);
}

GcvFamily
gcv_plan_get_family (GcvPlan * plan)
{
  return gcv_plan_get_choice (plan)->variant.family;
}

const GcvChoice *
gcv_plan_get_choice (GcvPlan * plan)
{
  if (plan->planar)
    return gcv_plan_get_choice (gcv_planar_luma (plan->planar));
  return &plan->choice;
}

const gchar *
gcv_plan_describe (GcvPlan * plan)
{
  return plan->planar ? gcv_planar_describe (plan->planar) :
      plan->description;
}

guint
gcv_plan_get_capacity (GcvPlan * plan)
{
  return plan->n_slots;
}

gpointer
gcv_plan_get_cuda_stream (GcvPlan * plan, guint slot)
{
  const GcvBackend *b = plan->engine->backend;
  g_return_val_if_fail (slot < plan->n_slots, NULL);
  if (plan->planar)
    return gcv_plan_get_cuda_stream (gcv_planar_luma (plan->planar), slot);
  return b->get_cuda_stream ? b->get_cuda_stream (plan->state, slot) : NULL;
}

guint
gcv_plan_get_next_cuda_streams (GcvPlan * plan, gpointer * streams, guint n)
{
  GcvPlan *plane;
  gpointer stream;
  guint count = 0;

  g_return_val_if_fail (plan && (streams || n == 0), 0);
  if (plan->planar) {
    /* each plane's plan has a ring of its own */
    for (guint i = 0; (plane = gcv_planar_plane (plan->planar, i)); i++)
      count += gcv_plan_get_next_cuda_streams (plane, streams + MIN (count,
              n), n - MIN (count, n));
    return count;
  }
  stream = gcv_plan_get_cuda_stream (plan, plan->next_ticket % plan->n_slots);
  if (!stream)
    return 0;
  if (n > 0)
    streams[0] = stream;
  return 1;
}

gboolean
gcv_plan_get_device_input (GcvPlan * plan, guint slot, GcvImage * img)
{
  const GcvBackend *b = plan->engine->backend;
  g_return_val_if_fail (slot < plan->n_slots, FALSE);
  if (plan->planar)
    return FALSE;               /* frames of several planes */
  return b->get_device_input && b->get_device_input (plan->state, slot, img);
}

gpointer
gcv_engine_host_alloc (GcvEngine * engine, gsize size, GError ** error)
{
  if (engine->backend->host_alloc)
    return engine->backend->host_alloc (engine->state, size, error);
  return g_malloc (size);
}

void
gcv_engine_host_free (GcvEngine * engine, gpointer mem)
{
  if (engine->backend->host_free)
    engine->backend->host_free (engine->state, mem);
  else
    g_free (mem);
}

void
gcv_plan_free (GcvPlan * plan)
{
  if (!plan)
    return;
  if (plan->planar)
    gcv_planar_free (plan->planar);
  else
    plan->engine->backend->plan_free (plan->state);
  plan_free_fields (plan);
}
