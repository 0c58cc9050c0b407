/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Filter descriptions: validation, normalisation and rank-1 factorisation. */
#include "gcv-private.h"
#include "gcv-builtin.h"
#include "gcv-tools.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (gcv-error-quark, gcv_error);

/* sum|K - column (x) row| must stay below this fraction of sum|K| for the
 * separable path, so that it adds at most 1e-6 * sum|K| * max|in| of error. */
#define RANK1_TOLERANCE 1e-6
/* |sum(K)| below this fraction of sum|K| counts as zero for `normalize`. */
#define ZERO_SUM_TOLERANCE 1e-9

void
gcv_filter_desc_init (GcvFilterDesc * desc)
{
  memset (desc, 0, sizeof (*desc));
  desc->builtin = GCV_BUILTIN_CUSTOM;
  desc->size = 5;
  desc->sigma = 1.0;
  desc->kernel_width = desc->kernel_height = 3;
  desc->scale = 1.0;
  desc->anchor_x = desc->anchor_y = -1;
  desc->border = GCV_BORDER_REPLICATE;
  desc->separable = GCV_SEPARABLE_AUTO;
  desc->algorithm = GCV_FAMILY_AUTO;
}

void
gcv_filter_desc_get_size (const GcvFilterDesc * desc, guint * kw, guint * kh)
{
  if (desc->builtin == GCV_BUILTIN_CUSTOM) {
    *kw = desc->kernel_width;
    *kh = desc->kernel_height;
  } else {
    gcv_builtin_get_size (desc->builtin, desc->size, kw, kh);
  }
}

/* One pass of checks; the first problem blamed on one of `fields` (any
 * problem for GCV_FIELD_ANY) ends it. */
typedef struct {
  GcvField fields;
  GError **error;
} Check;

static gboolean G_GNUC_PRINTF (3, 4)
    fails (Check * c, GcvField blame, const gchar * format, ...)
{
  va_list args;

  if (c->fields != GCV_FIELD_ANY && !(c->fields & blame))
    return FALSE;
  va_start (args, format);
  if (c->error) {
    gchar *msg = g_strdup_vprintf (format, args);
    g_set_error_literal (c->error, GCV_ERROR, GCV_ERROR_SETTINGS, msg);
    g_free (msg);
  }
  va_end (args);
  return TRUE;
}

static gboolean
all_finite (const gfloat * v, guint n)
{
  for (guint i = 0; i < n; i++)
    if (!isfinite (v[i]))
      return FALSE;
  return TRUE;
}

/* Rank-1 factorisation through the largest coefficient: K ~ column (x) row.
 * Exact for true outer products up to rounding. */
static gboolean
factorize (const gdouble * k, guint kw, guint kh, gdouble * row,
    gdouble * column)
{
  guint im = 0, jm = 0;
  gdouble p, err = 0.0, total = 0.0;

  for (guint j = 0; j < kh; j++)
    for (guint i = 0; i < kw; i++)
      if (fabs (k[j * kw + i]) > fabs (k[jm * kw + im])) {
        jm = j;
        im = i;
      }
  p = k[jm * kw + im];
  for (guint i = 0; i < kw; i++)
    row[i] = p != 0.0 ? k[jm * kw + i] : 0.0;
  for (guint j = 0; j < kh; j++)
    column[j] = p != 0.0 ? k[j * kw + im] / p : 1.0;
  for (guint j = 0; j < kh; j++)
    for (guint i = 0; i < kw; i++) {
      err += fabs (k[j * kw + i] - column[j] * row[i]);
      total += fabs (k[j * kw + i]);
    }
  return err <= RANK1_TOLERANCE * total;
}

/* The dense kernel a description stands for, before flip and scale.
 * Empty custom kernels are the 1x1 identity. */
typedef struct {
  guint kw, kh;
  gdouble *k;
  gdouble *row, *column;        /* given by the user, or NULL */
  gdouble *k_y;                 /* a magnitude's y derivative, or NULL */
} Dense;

static void
dense_clear (Dense * d)
{
  g_free (d->k);
  g_free (d->k_y);
  g_free (d->row);
  g_free (d->column);
  memset (d, 0, sizeof (*d));
}

static void
dense_from_desc (const GcvFilterDesc * desc, Dense * d)
{
  GcvBuiltin x, y;

  memset (d, 0, sizeof (*d));
  if (gcv_builtin_magnitude (desc->builtin, &x, &y)) {
    d->k = gcv_builtin_generate (x, desc->size, desc->sigma, &d->kw, &d->kh);
    d->k_y = gcv_builtin_generate (y, desc->size, desc->sigma, &d->kw,
        &d->kh);
  } else if (desc->builtin != GCV_BUILTIN_CUSTOM) {
    d->k = gcv_builtin_generate (desc->builtin, desc->size, desc->sigma,
        &d->kw, &d->kh);
  } else if (desc->n_row_kernel > 0) {
    d->kw = desc->n_row_kernel;
    d->kh = desc->n_column_kernel;
    d->k = g_new (gdouble, (gsize) d->kw * d->kh);
    d->row = g_new (gdouble, d->kw);
    d->column = g_new (gdouble, d->kh);
    for (guint i = 0; i < d->kw; i++)
      d->row[i] = desc->row_kernel[i];
    for (guint j = 0; j < d->kh; j++)
      d->column[j] = desc->column_kernel[j];
    for (guint j = 0; j < d->kh; j++)
      for (guint i = 0; i < d->kw; i++)
        d->k[j * d->kw + i] = d->column[j] * d->row[i];
  } else if (desc->n_kernel > 0) {
    d->kw = desc->kernel_width;
    d->kh = desc->kernel_height;
    d->k = g_new (gdouble, desc->n_kernel);
    for (guint i = 0; i < desc->n_kernel; i++)
      d->k[i] = desc->kernel[i];
  } else {
    d->kw = d->kh = 1;
    d->k = g_new (gdouble, 1);
    d->k[0] = 1.0;
  }
}

/* A double that a float holds: finite and within float's range. */
static gboolean
fits_float (gdouble v)
{
  return isfinite (v) && fabs (v) <= G_MAXFLOAT;
}

/* Problems of one value on its own, whatever the other settings are: the
 * setters refuse these. Array values arrive as floats, where a number
 * beyond float's range became infinite. */
static gboolean
check_values (const GcvFilterDesc * desc, Check * c)
{
  static const struct {
    GcvField field;
    const gchar *name;
    gsize offset;
  } scalars[] = {
    { GCV_FIELD_SCALE, "scale", G_STRUCT_OFFSET (GcvFilterDesc, scale) },
    { GCV_FIELD_BIAS, "bias", G_STRUCT_OFFSET (GcvFilterDesc, bias) },
    { GCV_FIELD_BORDER_VALUE, "border-value",
        G_STRUCT_OFFSET (GcvFilterDesc, border_value) },
  };
  const struct {
    GcvField field;
    const gchar *name;
    const gfloat *v;
    guint n, max;
  } arrays[] = {
    { GCV_FIELD_KERNEL, "kernel", desc->kernel, desc->n_kernel,
        GCV_MAX_KERNEL_SIZE * GCV_MAX_KERNEL_SIZE },
    { GCV_FIELD_ROW_KERNEL, "row-kernel", desc->row_kernel,
        desc->n_row_kernel, GCV_MAX_KERNEL_SIZE },
    { GCV_FIELD_COLUMN_KERNEL, "column-kernel", desc->column_kernel,
        desc->n_column_kernel, GCV_MAX_KERNEL_SIZE },
  };

  if (!(desc->sigma > 0.0 && isfinite (desc->sigma))
      && fails (c, GCV_FIELD_SIGMA, "sigma %g is not a finite value > 0",
          desc->sigma))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (scalars); i++) {
    gdouble v = G_STRUCT_MEMBER (gdouble, desc, scalars[i].offset);
    if (!fits_float (v) && fails (c, scalars[i].field,
            "%s %g is not a finite number within float's range (|v| <= %g)",
            scalars[i].name, v, G_MAXFLOAT))
      return FALSE;
  }
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++) {
    if (arrays[i].n > arrays[i].max && fails (c, arrays[i].field,
            "%s has %u values, more than the largest kernel takes (%u)",
            arrays[i].name, arrays[i].n, arrays[i].max))
      return FALSE;
    if (!all_finite (arrays[i].v, arrays[i].n) && fails (c, arrays[i].field,
            "%s has a value that is not a finite float (NaN, infinite, not "
            "a number, or beyond +-%g)", arrays[i].name, G_MAXFLOAT))
      return FALSE;
  }
  return TRUE;
}

/* How the values fit together: lengths against sizes, anchors inside K,
 * sizes of built-ins. */
static gboolean
check_fit (const GcvFilterDesc * desc, Check * c)
{
  guint kw, kh;

  gcv_filter_desc_get_size (desc, &kw, &kh);
  if (desc->n_kernel != 0
      && desc->n_kernel != desc->kernel_width * desc->kernel_height
      && fails (c, GCV_FIELD_KERNEL,
          "kernel has %u values but kernel-width x kernel-height is %u x %u "
          "= %u", desc->n_kernel, desc->kernel_width, desc->kernel_height,
          desc->kernel_width * desc->kernel_height))
    return FALSE;
  if (desc->n_row_kernel != 0 && desc->n_row_kernel != desc->kernel_width
      && fails (c, GCV_FIELD_ROW_KERNEL,
          "row-kernel has %u values but kernel-width is %u",
          desc->n_row_kernel, desc->kernel_width))
    return FALSE;
  if (desc->n_column_kernel != 0
      && desc->n_column_kernel != desc->kernel_height
      && fails (c, GCV_FIELD_COLUMN_KERNEL,
          "column-kernel has %u values but kernel-height is %u",
          desc->n_column_kernel, desc->kernel_height))
    return FALSE;
  if ((desc->n_row_kernel == 0) != (desc->n_column_kernel == 0)
      && fails (c, GCV_FIELD_NONE,
          "%s is set but %s is empty; give both or neither",
          desc->n_row_kernel ? "row-kernel" : "column-kernel",
          desc->n_row_kernel ? "column-kernel" : "row-kernel"))
    return FALSE;
  if (desc->builtin != GCV_BUILTIN_CUSTOM
      && desc->size < gcv_builtin_min_size (desc->builtin)
      && fails (c, GCV_FIELD_SIZE, "size %u is too small for filter %s "
          "(at least %u)", desc->size, gcv_builtin_nick (desc->builtin),
          gcv_builtin_min_size (desc->builtin)))
    return FALSE;
  if (desc->anchor_x >= (gint) kw
      && fails (c, GCV_FIELD_ANCHOR_X,
          "anchor-x %d is outside the kernel (width %u)", desc->anchor_x, kw))
    return FALSE;
  if (desc->anchor_y >= (gint) kh
      && fails (c, GCV_FIELD_ANCHOR_Y,
          "anchor-y %d is outside the kernel (height %u)", desc->anchor_y, kh))
    return FALSE;
  return TRUE;
}

/* The separable settings against K's rank (known once K is built). */
static gboolean
check_rank (const GcvFilterDesc * desc, gboolean rank1, Check * c)
{
  GcvBuiltin x, y;

  if (gcv_builtin_magnitude (desc->builtin, &x, &y)
      && (desc->separable == GCV_SEPARABLE_ALWAYS
          || desc->algorithm == GCV_FAMILY_SEPARABLE)
      && fails (c, desc->separable == GCV_SEPARABLE_ALWAYS ?
          GCV_FIELD_SEPARABLE : GCV_FIELD_ALGORITHM, "%s: filter=%s is the "
          "magnitude of two derivatives, which has no separable path",
          desc->separable == GCV_SEPARABLE_ALWAYS ? "separable=always" :
          "algorithm=separable", gcv_builtin_nick (desc->builtin)))
    return FALSE;
  if (desc->separable == GCV_SEPARABLE_ALWAYS && !rank1
      && fails (c, GCV_FIELD_SEPARABLE,
          "separable=always but the %s kernel is not separable (rank 1)",
          gcv_builtin_nick (desc->builtin)))
    return FALSE;
  if (desc->algorithm == GCV_FAMILY_SEPARABLE
      && desc->separable == GCV_SEPARABLE_NEVER
      && fails (c, GCV_FIELD_ALGORITHM | GCV_FIELD_SEPARABLE,
          "algorithm=separable contradicts separable=never"))
    return FALSE;
  if (desc->algorithm == GCV_FAMILY_SEPARABLE && !rank1
      && fails (c, GCV_FIELD_ALGORITHM,
          "algorithm=separable but the %s kernel is not separable (rank 1)",
          gcv_builtin_nick (desc->builtin)))
    return FALSE;
  return TRUE;
}

/* The 1x1 identity, which every kernel that is one tap of 1 at its anchor
 * (and no bias) becomes: the border no longer matters. */
static GcvFilter *
identity_filter (const GcvFilterDesc * desc)
{
  GcvFilter *f = g_new0 (GcvFilter, 1);

  f->kw = f->kh = 1;
  f->taps = g_new (gfloat, 1);
  f->taps[0] = 1.0f;
  f->rank1 = TRUE;
  f->row = g_new (gfloat, 1);
  f->column = g_new (gfloat, 1);
  f->row[0] = f->column[0] = 1.0f;
  f->use_separable = desc->separable != GCV_SEPARABLE_NEVER;
  f->separable_only = desc->separable == GCV_SEPARABLE_ALWAYS;
  f->border = desc->border;
  f->border_value = (gfloat) desc->border_value;
  f->filter_alpha = desc->alpha == GCV_ALPHA_FILTER;
  f->planes = desc->planes;
  f->identity = TRUE;
  return f;
}

/* The filter for `d` and its factors: correlation taps with the scale
 * folded in (convolution flips K and mirrors the anchor). NULL when the
 * scale makes a tap overflow float. */
static GcvFilter *
make_filter (const GcvFilterDesc * desc, const Dense * d, gboolean rank1,
    const gdouble * row, const gdouble * column, Check * c)
{
  GcvFilter *f = g_new0 (GcvFilter, 1);
  gboolean convolution = desc->mode == GCV_MODE_CONVOLUTION;
  gdouble sum = 0.0, total = 0.0, scale = desc->scale;
  gsize n = (gsize) d->kw * d->kh;
  guint ax, ay, nonzero = 0;

  ax = desc->anchor_x < 0 ? (d->kw - 1) / 2 : (guint) desc->anchor_x;
  ay = desc->anchor_y < 0 ? (d->kh - 1) / 2 : (guint) desc->anchor_y;
  if (desc->builtin == GCV_BUILTIN_CUSTOM && desc->n_kernel == 0
      && desc->n_row_kernel == 0)
    ax = ay = 0;                /* the identity is 1x1 */
  for (gsize i = 0; i < n; i++) {
    sum += d->k[i];
    total += fabs (d->k[i]);
  }
  if (desc->normalize && fabs (sum) > ZERO_SUM_TOLERANCE * total)
    scale /= sum;
  if (d->k_y) {
    /* sqrt (gx^2 + gy^2) keeps the size of the scale, not its sign */
    f->magnitude_sign = scale < 0.0 ? -1.0f : 1.0f;
    scale = fabs (scale);
    f->taps_y = g_new (gfloat, n);
  }

  f->kw = d->kw;
  f->kh = d->kh;
  f->ax = convolution ? d->kw - 1 - ax : ax;
  f->ay = convolution ? d->kh - 1 - ay : ay;
  f->taps = g_new (gfloat, n);
  for (guint j = 0; j < d->kh; j++)
    for (guint i = 0; i < d->kw; i++) {
      gsize src = convolution ? (d->kh - 1 - j) * d->kw + (d->kw - 1 - i)
          : j * d->kw + i;
      f->taps[j * d->kw + i] = (gfloat) (scale * d->k[src]);
      nonzero += f->taps[j * d->kw + i] != 0.0f;
      if (f->taps_y)
        f->taps_y[j * d->kw + i] = (gfloat) (scale * d->k_y[src]);
    }
  if (!all_finite (f->taps, n) || (f->taps_y && !all_finite (f->taps_y, n))) {
    gcv_filter_free (f);
    fails (c, GCV_FIELD_SCALE, "scale %g times the kernel overflows float",
        scale);
    return NULL;
  }
  f->rank1 = rank1;
  if (rank1) {
    f->row = g_new (gfloat, d->kw);
    f->column = g_new (gfloat, d->kh);
    for (guint i = 0; i < d->kw; i++)
      f->row[i] = (gfloat) (scale * row[convolution ? d->kw - 1 - i : i]);
    for (guint j = 0; j < d->kh; j++)
      f->column[j] = (gfloat) column[convolution ? d->kh - 1 - j : j];
  }
  f->use_separable = rank1 && desc->separable != GCV_SEPARABLE_NEVER;
  f->separable_only = desc->separable == GCV_SEPARABLE_ALWAYS;
  f->bias = (gfloat) desc->bias;
  f->border = desc->border;
  f->border_value = (gfloat) desc->border_value;
  f->filter_alpha = desc->alpha == GCV_ALPHA_FILTER;
  f->planes = desc->planes;
  if (nonzero == 1 && f->taps[f->ay * f->kw + f->ax] == 1.0f
      && f->bias == 0.0f && !f->taps_y) {
    gcv_filter_free (f);
    return identity_filter (desc);
  }
  return f;
}

/* Checks `desc`: the values of `fields` on their own when `out` is NULL
 * and `fields` is not GCV_FIELD_ANY, else everything, and then builds the
 * filter into `out` when given. */
static gboolean
build (const GcvFilterDesc * desc, GcvField fields, GcvFilter ** out,
    GError ** error)
{
  Check c = { fields, error };
  gboolean ok = FALSE, rank1;
  Dense d;
  gdouble *row = NULL, *column = NULL;

  memset (&d, 0, sizeof (d));
  if (!check_values (desc, &c))
    return FALSE;
  if (!out && fields != GCV_FIELD_ANY)
    return TRUE;
  /* how the values fit together: every problem counts from here on */
  c.fields = GCV_FIELD_ANY;
  if (!check_fit (desc, &c))
    return FALSE;

  dense_from_desc (desc, &d);
  row = g_new (gdouble, d.kw);
  column = g_new (gdouble, d.kh);
  if (d.row) {
    memcpy (row, d.row, d.kw * sizeof (gdouble));
    memcpy (column, d.column, d.kh * sizeof (gdouble));
    rank1 = TRUE;
  } else if (d.k_y) {
    rank1 = FALSE;              /* two kernels: the 2D paths only */
  } else {
    rank1 = factorize (d.k, d.kw, d.kh, row, column);
  }
  if (check_rank (desc, rank1, &c))
    ok = !out || (*out = make_filter (desc, &d, rank1, row, column, &c));
  dense_clear (&d);
  g_free (row);
  g_free (column);
  return ok;
}

gboolean
gcv_filter_desc_validate (const GcvFilterDesc * desc, GcvField fields,
    GError ** error)
{
  g_return_val_if_fail (desc != NULL, FALSE);
  return build (desc, fields, NULL, error);
}

GcvFilter *
gcv_filter_new (const GcvFilterDesc * desc, GError ** error)
{
  GcvFilter *f = NULL;

  g_return_val_if_fail (desc != NULL, NULL);
  if (!build (desc, GCV_FIELD_ANY, &f, error))
    return NULL;
  return f;
}

GcvFilter *
gcv_filter_copy (const GcvFilter * filter)
{
  GcvFilter *f = g_memdup2 (filter, sizeof (*filter));
  f->taps = g_memdup2 (filter->taps, sizeof (gfloat) * filter->kw * filter->kh);
  f->row = filter->row ? g_memdup2 (filter->row, sizeof (gfloat) * filter->kw)
      : NULL;
  f->column = filter->column ? g_memdup2 (filter->column,
      sizeof (gfloat) * filter->kh) : NULL;
  f->taps_y = filter->taps_y ? g_memdup2 (filter->taps_y,
      sizeof (gfloat) * filter->kw * filter->kh) : NULL;
  return f;
}

gboolean
gcv_filter_equal (const GcvFilter * a, const GcvFilter * b)
{
  if (a == b)
    return TRUE;
  if (!a || !b || a->kw != b->kw || a->kh != b->kh || a->ax != b->ax
      || a->ay != b->ay || a->rank1 != b->rank1
      || a->use_separable != b->use_separable
      || a->separable_only != b->separable_only || a->bias != b->bias
      || a->border != b->border || a->border_value != b->border_value
      || a->filter_alpha != b->filter_alpha || a->planes != b->planes
      || !a->taps_y != !b->taps_y || a->magnitude_sign != b->magnitude_sign)
    return FALSE;
  if (memcmp (a->taps, b->taps, sizeof (gfloat) * a->kw * a->kh) != 0
      || (a->taps_y && memcmp (a->taps_y, b->taps_y,
              sizeof (gfloat) * a->kw * a->kh) != 0))
    return FALSE;
  return !a->rank1 || (memcmp (a->row, b->row, sizeof (gfloat) * a->kw) == 0
      && memcmp (a->column, b->column, sizeof (gfloat) * a->kh) == 0);
}

gboolean
gcv_filter_is_identity (const GcvFilter * filter)
{
  return filter->identity;
}

void
gcv_filter_get_taps (const GcvFilter * f, GcvFilterTaps * t)
{
  t->kw = f->kw;
  t->kh = f->kh;
  t->ax = f->ax;
  t->ay = f->ay;
  t->taps = f->taps;
  t->taps_y = f->taps_y;
  t->rank1 = f->rank1;
  t->row = f->row;
  t->column = f->column;
  t->use_separable = f->use_separable;
  t->bias = f->bias;
  t->border = f->border;
  t->border_value = f->border_value;
}

void
gcv_filter_set_planes (GcvFilter * f, GcvPlanes planes)
{
  f->planes = planes;
}

static gint
sign (gfloat v)
{
  return (v > 0.0f) - (v < 0.0f);
}

gboolean
gcv_filter_factors_keep_signs (const GcvFilter * f)
{
  if (!f->rank1)
    return TRUE;
  for (guint j = 0; j < f->kh; j++)
    for (guint i = 0; i < f->kw; i++)
      if (sign (f->column[j]) * sign (f->row[i])
          != sign (f->taps[(gsize) j * f->kw + i]))
        return FALSE;
  return TRUE;
}

void
gcv_filter_free (GcvFilter * filter)
{
  if (!filter)
    return;
  g_free (filter->taps);
  g_free (filter->taps_y);
  g_free (filter->row);
  g_free (filter->column);
  g_free (filter);
}
