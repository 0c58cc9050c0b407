/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel level: device frames through the engine's plans and the peers.
 *
 * Engine rows: the slot's device input is filled once with the frame, and
 * each run submits it in place (src = that device image) with a pitched
 * device buffer as dst, between events on the plan's stream, then waits.
 * Peers read the same frame from a buffer of their own and write the same
 * kind of pitched buffer. Every output is checked against a double-precision
 * reference at sampled pixels, and against the first engine output that
 * passed that check over the whole frame. */
#include "kernel-bench.h"
#include "common.h"
#include "compare.h"
#include "fft-peer.h"
#include "npp-peer.h"

#include <math.h>
#include <string.h>

#define N_INNER_SAMPLES 2048
#define N_EDGE_SAMPLES 2048

/* What one frame's configurations share. */
typedef struct {
  const BenchKernelContext *ctx;
  const BenchFrame *frame;
  const BenchCopyLimit *copy;
  gsize row;                    /* bytes of a row, packed */
  guint8 *host_in;              /* the frame, rows packed */
  double max_abs_in;
  BenchSamples *samples;
  void *d_in;                   /* the frame for the peers */
  size_t in_pitch;
  void *d_out;                  /* every row writes here */
  size_t out_pitch;
  guint8 *host_out;             /* the output of the row just run */
  guint8 *host_ref;             /* the reference engine output */
  gboolean have_ref;
  double ref_tol;
  cudaStream_t peer_stream;
  GString *note;                /* the note of the row being made */
  double sampled;               /* the last check_output()'s sampled diff */
} Frame;

/* One configuration. */
typedef struct {
  BenchShape shape;
  BenchForm form;
  const GcvFilter *filter;
  double tol;                   /* tolerance (docs/filters.md) of one result */
} Config;

static void
fill_row (const Frame * fr, const Config * c, BenchRow * row)
{
  row->format = fr->frame->format;
  row->width = fr->frame->width;
  row->height = fr->frame->height;
  row->kw = c->shape.kw;
  row->kh = c->shape.kh;
  row->form = bench_form_name (c->form);
  if (c->filter) {
    GcvFilterTaps taps;
    gcv_filter_get_taps (c->filter, &taps);
    row->rank1 = taps.rank1;
  } else {
    row->rank1 = -1;
  }
}

/* Rates from the median time. */
static void
fill_rates (const Frame * fr, const Config * c, BenchRow * row)
{
  const BenchFrame *f = fr->frame;
  double ms = row->stats.median;
  double flops = 2.0 * c->shape.kw * c->shape.kh * (double) f->width *
      f->height * bench_channels (f->format);

  if (row->stats.runs == 0 || ms <= 0.0)
    return;
  row->gflops = flops / (ms * 1e6);
  row->pct_peak = fr->ctx->fma_gflops > 0.0 ?
      100.0 * row->gflops / fr->ctx->fma_gflops : NAN;
  row->gbps = 2.0 * fr->row * f->height / (ms * 1e6);
  row->x_copy = ms / fr->copy->best.median;
}

/* Fills the output with 0xff bytes (NaN floats): a row that writes no
 * output, or only part of it, cannot pass with the previous row's. */
static void
poison (Frame * fr, cudaStream_t stream)
{
  BENCH_CUDA (cudaMemset2DAsync (fr->d_out, fr->out_pitch, 0xff, fr->row,
          fr->frame->height, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
}

static void
download (Frame * fr, cudaStream_t stream)
{
  BENCH_CUDA (cudaMemcpy2DAsync (fr->host_out, fr->row, fr->d_out,
          fr->out_pitch, fr->row, fr->frame->height,
          cudaMemcpyDeviceToHost, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
}

/* Checks host_out: against the reference at the samples with `tol`, and
 * over the whole frame against the reference output when there is one
 * (floats: the two tolerances add up; 8-bit: both are within 1 of the same
 * value, so within 1 of each other). The first engine output that passes
 * becomes the reference. Problems are appended to fr->note. */
static void
check_output (Frame * fr, const Config * c, BenchRow * row, double tol,
    gboolean alpha_copied, gboolean may_become_ref)
{
  const BenchFrame *f = fr->frame;
  double sampled = bench_check_samples (f->format, fr->host_in, fr->row,
      fr->host_out, fr->row, f->width, f->height, c->filter, fr->samples,
      alpha_copied);
  gboolean ok = sampled <= tol;

  fr->sampled = sampled;
  row->tolerance = tol;
  row->max_diff = sampled;
  if (!ok)
    g_string_append_printf (fr->note, "%sreference check at %u pixels: "
        "max diff %.3g > %.3g", fr->note->len ? "; " : "", fr->samples->n,
        sampled, tol);
  if (fr->have_ref) {
    double full = bench_max_diff (f->format, fr->host_ref, fr->row,
        fr->host_out, fr->row, f->width, f->height, alpha_copied);
    row->max_diff = full;
    row->tolerance = f->format == GCV_FORMAT_GRAY32F ? tol + fr->ref_tol :
        MAX (tol, fr->ref_tol);
    if (!(full <= row->tolerance)) {
      g_string_append_printf (fr->note, "%sdiffers from the reference "
          "engine output by %.3g > %.3g", fr->note->len ? "; " : "", full,
          row->tolerance);
      ok = FALSE;
    }
  } else if (ok && may_become_ref) {
    memcpy (fr->host_ref, fr->host_out, fr->row * f->height);
    fr->have_ref = TRUE;
    fr->ref_tol = tol;
    g_string_append_printf (fr->note, "%sreference output for this kernel",
        fr->note->len ? "; " : "");
  }
  row->check = ok ? "ok" : "FAIL";
  row->note = fr->note->str;
}

/* --- engine rows ---------------------------------------------------------- */

typedef struct {
  GcvPlan *plan;
  GcvImage src, dst;
  GcvTicket ticket;             /* of the frame submitted last */
} EngineJob;

static void
engine_submit (gpointer user)
{
  EngineJob *j = user;
  GError *error = NULL;
  if (!gcv_plan_submit (j->plan, &j->src, &j->dst, &j->ticket, &error))
    bench_die ("gcv_plan_submit failed: %s", error->message);
}

static void
engine_wait (gpointer user)
{
  EngineJob *j = user;
  GError *error = NULL;
  if (!gcv_plan_wait (j->plan, j->ticket, &error))
    bench_die ("gcv_plan_wait failed: %s", error->message);
}

static void
run_engine (Frame * fr, const Config * c, GcvFamily family)
{
  const BenchFrame *f = fr->frame;
  GcvGeometry geometry = { f->format, f->format, f->width, f->height };
  BenchRow row;
  EngineJob j;
  GError *error = NULL;
  cudaStream_t stream;

  bench_row_init (&row, "kernel");
  fill_row (fr, c, &row);
  g_string_truncate (fr->note, 0);
  row.impl = "engine";
  row.requested = gcv_family_nick (family);

  j.plan = gcv_plan_new (fr->ctx->engine, &geometry, c->filter, family, 1,
      &error);
  if (!j.plan) {
    row.check = "error";
    row.description = error->message;
    bench_report_row (fr->ctx->report, &row);
    g_error_free (error);
    return;
  }
  row.description = gcv_plan_describe (j.plan);
  if (family != GCV_FAMILY_AUTO && gcv_plan_get_family (j.plan) != family)
    g_string_append_printf (fr->note, "ran %s, not %s",
        gcv_family_nick (gcv_plan_get_family (j.plan)),
        gcv_family_nick (family));
  stream = gcv_plan_get_cuda_stream (j.plan, 0);
  if (!stream || !gcv_plan_get_device_input (j.plan, 0, &j.src))
    bench_die ("the plan has no CUDA stream or device input: %s",
        gcv_plan_describe (j.plan));

  /* the slot's buffers are made on its stream: fill them in its order */
  BENCH_CUDA (cudaStreamSynchronize (stream));
  BENCH_CUDA (cudaMemcpy2DAsync (j.src.data, j.src.stride, fr->host_in,
          fr->row, fr->row, f->height, cudaMemcpyHostToDevice, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
  j.src.on_device = TRUE;
  j.dst.data = fr->d_out;
  j.dst.stride = fr->out_pitch;
  j.dst.on_device = TRUE;
  poison (fr, stream);

  /* an untimed first frame: a failure here is reported, not fatal */
  if (!gcv_plan_run (j.plan, &j.src, &j.dst, &error)) {
    row.check = "error";
    g_string_append_printf (fr->note, "%s%s", fr->note->len ? "; " : "",
        error->message);
    row.note = fr->note->str;
    bench_report_row (fr->ctx->report, &row);
    g_error_free (error);
    gcv_plan_free (j.plan);
    return;
  }
  bench_time (stream, engine_submit, engine_wait, &j, fr->ctx->warmup,
      fr->ctx->runs, &row.stats);
  fill_rates (fr, c, &row);

  download (fr, stream);
  /* the element's output, whatever the family: docs/filters.md's
   * tolerance holds */
  check_output (fr, c, &row, c->tol, TRUE, TRUE);
  if (strcmp (row.check, "FAIL") == 0
      && gcv_plan_get_family (j.plan) == GCV_FAMILY_FFT
      && fr->sampled <= BENCH_FFT_TOLERANCE_FACTOR * c->tol
      && row.max_diff <= BENCH_FFT_TOLERANCE_FACTOR * row.tolerance) {
    g_string_append_printf (fr->note, "; within %g times the tolerance: "
        "FFT rounding beyond docs/filters.md", BENCH_FFT_TOLERANCE_FACTOR);
    row.note = fr->note->str;
  }
  bench_report_row (fr->ctx->report, &row);
  gcv_plan_free (j.plan);
}

/* --- peers ---------------------------------------------------------------- */

typedef struct {
  Frame *fr;
  BenchNppPeer *npp;
  BenchFftPeer *fft;
} PeerJob;

static void
peer_enqueue (gpointer user)
{
  PeerJob *j = user;
  if (j->npp)
    bench_npp_peer_enqueue (j->npp, j->fr->d_in, j->fr->in_pitch,
        j->fr->d_out, j->fr->out_pitch);
  else
    bench_fft_peer_enqueue (j->fft, j->fr->d_in, j->fr->in_pitch,
        j->fr->d_out, j->fr->out_pitch);
}

/* After a mismatch: does NPP match when given the taps as they are? */
static gboolean
npp_matches_unreversed (Frame * fr, const Config * c, gboolean separable,
    double tol)
{
  const BenchFrame *f = fr->frame;
  BenchNppPeer *p = bench_npp_peer_new (f->format, f->width, f->height,
      c->filter, separable, FALSE, fr->peer_stream, NULL);
  gboolean match;

  if (!p || !fr->have_ref) {
    bench_npp_peer_free (p);
    return FALSE;
  }
  poison (fr, fr->peer_stream);
  bench_npp_peer_enqueue (p, fr->d_in, fr->in_pitch, fr->d_out,
      fr->out_pitch);
  download (fr, fr->peer_stream);
  match = bench_max_diff (f->format, fr->host_ref, fr->row, fr->host_out,
      fr->row, f->width, f->height, FALSE) <= tol;
  bench_npp_peer_free (p);
  return match;
}

static void
run_npp (Frame * fr, const Config * c, gboolean separable)
{
  const BenchFrame *f = fr->frame;
  BenchRow row;
  PeerJob j = { fr, NULL, NULL };
  GError *error = NULL;
  gboolean alpha_copied;

  bench_row_init (&row, "kernel");
  fill_row (fr, c, &row);
  g_string_truncate (fr->note, 0);
  row.impl = separable ? "npp-sep" : "npp";
  j.npp = bench_npp_peer_new (f->format, f->width, f->height, c->filter,
      separable, TRUE, fr->peer_stream, &error);
  if (!j.npp) {
    row.description = error->message;
    row.check = "n/a";
    bench_report_row (fr->ctx->report, &row);
    g_error_free (error);
    return;
  }
  row.description = bench_npp_peer_describe (j.npp);
  alpha_copied = !bench_npp_peer_filters_alpha (j.npp);
  poison (fr, fr->peer_stream);
  bench_time (fr->peer_stream, peer_enqueue, NULL, &j, fr->ctx->warmup,
      fr->ctx->runs, &row.stats);
  fill_rates (fr, c, &row);
  download (fr, fr->peer_stream);
  /* NPP's 8-bit filters round differently (seen 1.5 off the reference, not
   * within 1): a peer is checked for being the same filter, so allow one
   * more level there */
  check_output (fr, c, &row, f->format == GCV_FORMAT_GRAY32F ? c->tol :
      c->tol + 1.0, alpha_copied, FALSE);
  if (strcmp (row.check, "FAIL") == 0
      && npp_matches_unreversed (fr, c, separable, row.tolerance)) {
    g_string_append (fr->note, "; the output matches with the taps not "
        "reversed: NPP correlates here");
    row.note = fr->note->str;
  }
  bench_report_row (fr->ctx->report, &row);
  bench_npp_peer_free (j.npp);
}

static void
run_cufft (Frame * fr, const Config * c)
{
  const BenchFrame *f = fr->frame;
  BenchRow row;
  PeerJob j = { fr, NULL, NULL };

  bench_row_init (&row, "kernel");
  fill_row (fr, c, &row);
  g_string_truncate (fr->note, 0);
  row.impl = "cufft";
  j.fft = bench_fft_peer_new (f->format, f->width, f->height, c->filter,
      fr->peer_stream);
  row.description = bench_fft_peer_describe (j.fft);
  poison (fr, fr->peer_stream);
  bench_time (fr->peer_stream, peer_enqueue, NULL, &j, fr->ctx->warmup,
      fr->ctx->runs, &row.stats);
  fill_rates (fr, c, &row);
  download (fr, fr->peer_stream);
  check_output (fr, c, &row, c->tol * BENCH_FFT_TOLERANCE_FACTOR, TRUE,
      FALSE);
  bench_report_row (fr->ctx->report, &row);
  bench_fft_peer_free (j.fft);
}

/* --- a frame -------------------------------------------------------------- */

static void
run_config (Frame * fr, BenchShape shape, BenchForm form)
{
  const BenchKernelContext *ctx = fr->ctx;
  const BenchPlan *plan = ctx->plan;
  Config c = { shape, form, NULL, 0.0 };
  GcvFilter *filter;
  GcvFilterTaps taps;
  GError *error = NULL;

  filter = bench_make_filter (shape, form, ctx->seed, &error);
  if (!filter) {
    BenchRow row;
    bench_row_init (&row, "kernel");
    fill_row (fr, &c, &row);
    row.impl = "engine";
    row.check = "error";
    row.description = error->message;
    bench_report_row (ctx->report, &row);
    g_error_free (error);
    return;
  }
  c.filter = filter;
  gcv_filter_get_taps (filter, &taps);
  c.tol = bench_tolerance (fr->frame->format, filter, fr->max_abs_in);
  fr->have_ref = FALSE;
  printf ("-- %ux%u %s: %s; rank 1: %s; tolerance %.3g\n", shape.kw,
      shape.kh, bench_form_name (form), form == BENCH_FORM_2D ?
      "Gaussian plus noise, full kernel, separable=never" :
      "Gaussian as row and column kernels", taps.rank1 ? "yes" : "no",
      c.tol);

  for (guint i = 0; i < plan->families->len; i++) {
    GcvFamily family = g_array_index (plan->families, GcvFamily, i);
    if (bench_family_applies (family, form))
      run_engine (fr, &c, family);
  }
  if (plan->peers & BENCH_PEER_NPP) {
    run_npp (fr, &c, FALSE);
    if (form == BENCH_FORM_SEPARABLE && fr->frame->format == GCV_FORMAT_GRAY32F)
      run_npp (fr, &c, TRUE);
  }
  if (plan->peers & BENCH_PEER_CUFFT)
    run_cufft (fr, &c);
  gcv_filter_free (filter);
}

void
bench_kernels_run_frame (const BenchKernelContext * ctx,
    const BenchFrame * frame, const BenchCopyLimit * copy)
{
  Frame fr;
  guint margin = 1;

  memset (&fr, 0, sizeof (fr));
  fr.ctx = ctx;
  fr.frame = frame;
  fr.copy = copy;
  fr.row = bench_row_bytes (frame->format, frame->width);
  fr.host_in = bench_random_frame (frame->format, frame->width,
      frame->height, ctx->seed);
  fr.max_abs_in = bench_max_abs (frame->format, fr.host_in, frame->width,
      frame->height);
  for (guint i = 0; i < ctx->plan->shapes->len; i++) {
    BenchShape s = g_array_index (ctx->plan->shapes, BenchShape, i);
    margin = MAX (margin, MAX (s.kw, s.kh));
  }
  fr.samples = bench_samples_new (frame->width, frame->height, margin,
      N_INNER_SAMPLES, N_EDGE_SAMPLES, ctx->seed + 1);
  fr.note = g_string_new (NULL);
  fr.host_out = g_malloc (fr.row * frame->height);
  fr.host_ref = g_malloc (fr.row * frame->height);
  BENCH_CUDA (cudaStreamCreateWithFlags (&fr.peer_stream,
          cudaStreamNonBlocking));
  BENCH_CUDA (cudaMallocPitch (&fr.d_in, &fr.in_pitch, fr.row,
          frame->height));
  BENCH_CUDA (cudaMallocPitch (&fr.d_out, &fr.out_pitch, fr.row,
          frame->height));
  BENCH_CUDA (cudaMemcpy2DAsync (fr.d_in, fr.in_pitch, fr.host_in, fr.row,
          fr.row, frame->height, cudaMemcpyHostToDevice, fr.peer_stream));
  BENCH_CUDA (cudaStreamSynchronize (fr.peer_stream));

  for (guint i = 0; i < ctx->plan->shapes->len; i++)
    for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE; form++)
      if (ctx->plan->forms[form])
        run_config (&fr, g_array_index (ctx->plan->shapes, BenchShape, i),
            form);

  BENCH_CUDA (cudaStreamSynchronize (fr.peer_stream));
  BENCH_CUDA (cudaFree (fr.d_in));
  BENCH_CUDA (cudaFree (fr.d_out));
  BENCH_CUDA (cudaStreamDestroy (fr.peer_stream));
  bench_samples_free (fr.samples);
  g_free (fr.host_in);
  g_free (fr.host_out);
  g_free (fr.host_ref);
  g_string_free (fr.note, TRUE);
}
