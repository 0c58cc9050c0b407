/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The property table of gpuconvolve: each property installed with its
 * documentation and default, and set and got under the object lock. A
 * value is refused here only for a problem of its own; whether the values
 * fit together is judged when the filter is next built
 * (gstgpuconvolvefilter.c). docs/properties.md. */
#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolveenums.h"

#include <math.h>
#include <string.h>

#define DEFAULT_QUEUE_DEPTH 2
#define MAX_QUEUE_DEPTH 8
/* MiB of upstream's memory page-locked at most (docs/pipeline.md) */
#define DEFAULT_HOST_REGISTER_LIMIT 1024
#define MAX_HOST_REGISTER_LIMIT (1024 * 1024)

enum
{
  PROP_0,
  PROP_KERNEL,
  PROP_KERNEL_WIDTH,
  PROP_KERNEL_HEIGHT,
  PROP_ROW_KERNEL,
  PROP_COLUMN_KERNEL,
  PROP_FILTER,
  PROP_SIZE,
  PROP_SIGMA,
  PROP_NORMALIZE,
  PROP_SCALE,
  PROP_BIAS,
  PROP_MODE,
  PROP_ANCHOR_X,
  PROP_ANCHOR_Y,
  PROP_BORDER,
  PROP_BORDER_VALUE,
  PROP_ALPHA,
  PROP_PLANES,
  PROP_SEPARABLE,
  PROP_ALGORITHM,
  PROP_ACTIVE_ALGORITHM,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_QUEUE_DEPTH,
  PROP_TUNING_FILE,
  PROP_STATISTICS,
  PROP_STATISTICS_THRESHOLD,
  PROP_POST_MESSAGES,
  PROP_HOST_REGISTER,
  PROP_HOST_REGISTER_LIMIT,
  /* gstgpuconvolveregions.c's, in its order */
  PROP_REGIONS,
  PROP_REGION_SOURCE,
  PROP_REGION_TYPE,
  PROP_REGION_MODE,
  PROP_REGION_FAIL,
};

/* No element spec: GObject would validate each value against it before the
 * setter runs, refusing NaN with a GLib warning, clamping infinities to
 * finite values and zeroing numbers of another type, so the setter could
 * not refuse and name bad coefficients itself (docs/errors.md).
 * floats_from_value() takes numbers of any type. */
static GParamSpec *
float_array_pspec (const gchar * name, const gchar * nick, const gchar * blurb)
{
  return gst_param_spec_array (name, nick, blurb, NULL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
}

/* The values of an array property as floats (numbers of any type). */
static GArray *
floats_from_value (const GValue * value)
{
  guint n = gst_value_array_get_size (value);
  GArray *a = g_array_sized_new (FALSE, FALSE, sizeof (gfloat), n);

  for (guint i = 0; i < n; i++) {
    GValue d = G_VALUE_INIT;
    gfloat f = NAN;
    g_value_init (&d, G_TYPE_DOUBLE);
    if (g_value_transform (gst_value_array_get_value (value, i), &d))
      f = (gfloat) g_value_get_double (&d);
    g_value_unset (&d);
    g_array_append_val (a, f);  /* NaN for non-numbers: rejected later */
  }
  return a;
}

static void
value_from_floats (GValue * value, const GArray * a)
{
  for (guint i = 0; i < a->len; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_FLOAT);
    g_value_set_float (&v, g_array_index (a, gfloat, i));
    gst_value_array_append_and_take_value (value, &v);
  }
}

/* The arrays in the description point into the element's GArrays. */
static void
sync_desc_arrays (GstGpuConvolve * self)
{
  self->desc.kernel = (const gfloat *) self->kernel->data;
  self->desc.n_kernel = self->kernel->len;
  self->desc.row_kernel = (const gfloat *) self->row_kernel->data;
  self->desc.n_row_kernel = self->row_kernel->len;
  self->desc.column_kernel = (const gfloat *) self->column_kernel->data;
  self->desc.n_column_kernel = self->column_kernel->len;
}

/* The defaults, in a new element. */
void
gst_gpu_convolve_properties_init (GstGpuConvolve * self)
{
  gcv_filter_desc_init (&self->desc);
  self->kernel = g_array_new (FALSE, FALSE, sizeof (gfloat));
  self->row_kernel = g_array_new (FALSE, FALSE, sizeof (gfloat));
  self->column_kernel = g_array_new (FALSE, FALSE, sizeof (gfloat));
  sync_desc_arrays (self);
  self->backend = GCV_BACKEND_AUTO;
  self->cuda_device_id = -1;
  self->queue_depth = DEFAULT_QUEUE_DEPTH;
  self->host_register = GST_GPU_CONVOLVE_HOST_REGISTER_REUSED;
  self->host_register_limit = DEFAULT_HOST_REGISTER_LIMIT;
  self->settings_changed = TRUE;
  gst_gpu_convolve_regions_init (self);
}

void
gst_gpu_convolve_properties_finalize (GstGpuConvolve * self)
{
  gst_gpu_convolve_regions_finalize (self);
  g_array_unref (self->kernel);
  g_array_unref (self->row_kernel);
  g_array_unref (self->column_kernel);
  g_free (self->tuning_file);
  g_free (self->active_algorithm);
}

void
gst_gpu_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (object);
  GcvFilterDesc cand;
  GcvField blame = GCV_FIELD_NONE;
  GArray *array = NULL, **array_slot = NULL;
  gboolean filter_setting = TRUE;
  GError *error = NULL;

  GST_OBJECT_LOCK (self);
  cand = self->desc;
  switch (prop_id) {
    case PROP_KERNEL:
    case PROP_ROW_KERNEL:
    case PROP_COLUMN_KERNEL:
      array = floats_from_value (value);
      if (prop_id == PROP_KERNEL) {
        cand.kernel = (const gfloat *) array->data;
        cand.n_kernel = array->len;
        blame = GCV_FIELD_KERNEL;
        array_slot = &self->kernel;
      } else if (prop_id == PROP_ROW_KERNEL) {
        cand.row_kernel = (const gfloat *) array->data;
        cand.n_row_kernel = array->len;
        blame = GCV_FIELD_ROW_KERNEL;
        array_slot = &self->row_kernel;
      } else {
        cand.column_kernel = (const gfloat *) array->data;
        cand.n_column_kernel = array->len;
        blame = GCV_FIELD_COLUMN_KERNEL;
        array_slot = &self->column_kernel;
      }
      break;
    case PROP_KERNEL_WIDTH:
      cand.kernel_width = g_value_get_uint (value);
      break;
    case PROP_KERNEL_HEIGHT:
      cand.kernel_height = g_value_get_uint (value);
      break;
    case PROP_FILTER:
      cand.builtin = g_value_get_enum (value);
      break;
    case PROP_SIZE:
      cand.size = g_value_get_uint (value);
      break;
    case PROP_SIGMA:
      cand.sigma = g_value_get_double (value);
      blame = GCV_FIELD_SIGMA;
      break;
    case PROP_NORMALIZE:
      cand.normalize = g_value_get_boolean (value);
      break;
    case PROP_SCALE:
      cand.scale = g_value_get_double (value);
      blame = GCV_FIELD_SCALE;
      break;
    case PROP_BIAS:
      cand.bias = g_value_get_double (value);
      blame = GCV_FIELD_BIAS;
      break;
    case PROP_MODE:
      cand.mode = g_value_get_enum (value);
      break;
    case PROP_ANCHOR_X:
      cand.anchor_x = g_value_get_int (value);
      break;
    case PROP_ANCHOR_Y:
      cand.anchor_y = g_value_get_int (value);
      break;
    case PROP_BORDER:
      cand.border = g_value_get_enum (value);
      break;
    case PROP_BORDER_VALUE:
      cand.border_value = g_value_get_double (value);
      blame = GCV_FIELD_BORDER_VALUE;
      break;
    case PROP_ALPHA:
      cand.alpha = g_value_get_enum (value);
      break;
    case PROP_PLANES:
      cand.planes = g_value_get_enum (value);
      break;
    case PROP_SEPARABLE:
      cand.separable = g_value_get_enum (value);
      break;
    case PROP_ALGORITHM:
      cand.algorithm = g_value_get_enum (value);
      break;
    default:
      filter_setting = FALSE;
      switch (prop_id) {
        case PROP_BACKEND:
          self->backend = g_value_get_enum (value);
          break;
        case PROP_CUDA_DEVICE_ID:
          self->cuda_device_id = g_value_get_int (value);
          break;
        case PROP_QUEUE_DEPTH:
          self->queue_depth = g_value_get_uint (value);
          break;
        case PROP_HOST_REGISTER:
          self->host_register = g_value_get_enum (value);
          break;
        case PROP_HOST_REGISTER_LIMIT:
          self->host_register_limit = g_value_get_uint (value);
          break;
        case PROP_TUNING_FILE:
          g_free (self->tuning_file);
          self->tuning_file = g_value_dup_string (value);
          break;
        case PROP_STATISTICS:
          self->frame_options.statistics = g_value_get_boolean (value);
          /* into or out of passthrough (gstgpuconvolvefilter.c) */
          self->settings_changed = TRUE;
          break;
        case PROP_STATISTICS_THRESHOLD:
          self->frame_options.statistics_threshold =
              g_value_get_double (value);
          break;
        case PROP_POST_MESSAGES:
          self->post_messages = g_value_get_boolean (value);
          break;
        case PROP_REGIONS:
        case PROP_REGION_SOURCE:
        case PROP_REGION_TYPE:
        case PROP_REGION_MODE:
        case PROP_REGION_FAIL:
          gst_gpu_convolve_regions_set_property (self,
              prop_id - PROP_REGIONS, value, &error);
          break;
        default:
          G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
          break;
      }
      break;
  }

  /* A value is refused only for a problem of its own (a NaN, a number
   * beyond float's range); whether the properties fit together is judged
   * when the filter is next built, so they may be set in any order. */
  if (filter_setting && blame != GCV_FIELD_NONE
      && !gcv_filter_desc_validate (&cand, blame, &error)) {
    if (array)
      g_array_unref (array);
  } else if (filter_setting) {
    if (array_slot) {
      g_array_unref (*array_slot);
      *array_slot = array;
    }
    self->desc = cand;
    sync_desc_arrays (self);
    self->settings_changed = TRUE;
  }
  GST_OBJECT_UNLOCK (self);

  if (error) {
    /* where a gst-launch user sees it, as GObject's own range checks do */
    gchar *attempt = G_VALUE_HOLDS_DOUBLE (value) ?
        g_strdup_printf ("%g", g_value_get_double (value)) :
        g_strdup_value_contents (value);
    if (strlen (attempt) > 80)
      strcpy (attempt + 72, "...");
    g_warning ("%s: refusing %s=%s: %s; keeping the previous value",
        GST_OBJECT_NAME (self), pspec->name, attempt, error->message);
    g_free (attempt);
    if (prop_id == PROP_REGIONS)
      gst_gpu_convolve_regions_refused (self, value, error->message);
    g_error_free (error);
  }
}

void
gst_gpu_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KERNEL:
      value_from_floats (value, self->kernel);
      break;
    case PROP_ROW_KERNEL:
      value_from_floats (value, self->row_kernel);
      break;
    case PROP_COLUMN_KERNEL:
      value_from_floats (value, self->column_kernel);
      break;
    case PROP_KERNEL_WIDTH:
      g_value_set_uint (value, self->desc.kernel_width);
      break;
    case PROP_KERNEL_HEIGHT:
      g_value_set_uint (value, self->desc.kernel_height);
      break;
    case PROP_FILTER:
      g_value_set_enum (value, self->desc.builtin);
      break;
    case PROP_SIZE:
      g_value_set_uint (value, self->desc.size);
      break;
    case PROP_SIGMA:
      g_value_set_double (value, self->desc.sigma);
      break;
    case PROP_NORMALIZE:
      g_value_set_boolean (value, self->desc.normalize);
      break;
    case PROP_SCALE:
      g_value_set_double (value, self->desc.scale);
      break;
    case PROP_BIAS:
      g_value_set_double (value, self->desc.bias);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->desc.mode);
      break;
    case PROP_ANCHOR_X:
      g_value_set_int (value, self->desc.anchor_x);
      break;
    case PROP_ANCHOR_Y:
      g_value_set_int (value, self->desc.anchor_y);
      break;
    case PROP_BORDER:
      g_value_set_enum (value, self->desc.border);
      break;
    case PROP_BORDER_VALUE:
      g_value_set_double (value, self->desc.border_value);
      break;
    case PROP_ALPHA:
      g_value_set_enum (value, self->desc.alpha);
      break;
    case PROP_PLANES:
      g_value_set_enum (value, self->desc.planes);
      break;
    case PROP_SEPARABLE:
      g_value_set_enum (value, self->desc.separable);
      break;
    case PROP_ALGORITHM:
      g_value_set_enum (value, self->desc.algorithm);
      break;
    case PROP_ACTIVE_ALGORITHM:
      g_value_set_string (value, self->active_algorithm);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->cuda_device_id);
      break;
    case PROP_QUEUE_DEPTH:
      g_value_set_uint (value, self->queue_depth);
      break;
    case PROP_HOST_REGISTER:
      g_value_set_enum (value, self->host_register);
      break;
    case PROP_HOST_REGISTER_LIMIT:
      g_value_set_uint (value, self->host_register_limit);
      break;
    case PROP_TUNING_FILE:
      g_value_set_string (value, self->tuning_file);
      break;
    case PROP_STATISTICS:
      g_value_set_boolean (value, self->frame_options.statistics);
      break;
    case PROP_STATISTICS_THRESHOLD:
      g_value_set_double (value, self->frame_options.statistics_threshold);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_REGIONS:
    case PROP_REGION_SOURCE:
    case PROP_REGION_TYPE:
    case PROP_REGION_MODE:
    case PROP_REGION_FAIL:
      gst_gpu_convolve_regions_get_property (self, prop_id - PROP_REGIONS,
          value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* Every property with its documentation, from which gst-inspect-1.0 and
 * the plugin's documentation read. */
void
gst_gpu_convolve_properties_install (GObjectClass * gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags live = rw | GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags controllable = live | GST_PARAM_CONTROLLABLE;
  /* For scale, bias and border-value: an unbounded range and lax validation
   * let NaN and infinities through to the setter, which refuses them with a
   * warning naming the property; GObject would drop NaN with a GLib
   * warning of its own, and clamp infinities to finite values. */
  const GParamFlags unbounded = controllable | G_PARAM_LAX_VALIDATION;
  const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;

  /**
   * GstGpuConvolve:kernel:
   *
   * The kernel K, row-major, kernel-width x kernel-height values, in any
   * order with the sizes: the length is checked when the filter is built.
   * Empty (the default) is the identity. Used when filter=custom and no row-kernel/column-kernel pair
   * is set.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_KERNEL,
      float_array_pspec ("kernel", "Kernel",
          "Row-major kernel of kernel-width x kernel-height coefficients; "
          "empty is the identity"));
  /**
   * GstGpuConvolve:kernel-width:
   *
   * Width of the custom kernel.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_KERNEL_WIDTH,
      g_param_spec_uint ("kernel-width", "Kernel width",
          "Width of kernel and the length of row-kernel", 1,
          GCV_MAX_KERNEL_SIZE, 3, live));
  /**
   * GstGpuConvolve:kernel-height:
   *
   * Height of the custom kernel.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_KERNEL_HEIGHT,
      g_param_spec_uint ("kernel-height", "Kernel height",
          "Height of kernel and the length of column-kernel", 1,
          GCV_MAX_KERNEL_SIZE, 3, live));
  /**
   * GstGpuConvolve:row-kernel:
   *
   * Horizontal factor of a separable kernel, kernel-width values. With
   * column-kernel, K[j][i] = column[j] * row[i]; the pair takes precedence
   * over kernel.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ROW_KERNEL,
      float_array_pspec ("row-kernel", "Row kernel",
          "Horizontal factor of a separable kernel (kernel-width values)"));
  /**
   * GstGpuConvolve:column-kernel:
   *
   * Vertical factor of a separable kernel, kernel-height values.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_COLUMN_KERNEL,
      float_array_pspec ("column-kernel", "Column kernel",
          "Vertical factor of a separable kernel (kernel-height values)"));
  /**
   * GstGpuConvolve:filter:
   *
   * A built-in kernel made from size and sigma, or custom for the kernel
   * properties. docs/filters.md defines each.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_FILTER,
      g_param_spec_enum ("filter", "Filter",
          "Built-in kernel from size and sigma, or custom for the kernel "
          "properties", GST_TYPE_GPU_CONVOLVE_FILTER, GCV_BUILTIN_CUSTOM,
          live));
  /**
   * GstGpuConvolve:size:
   *
   * Size of the built-in filters (scharr is always 3x3).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SIZE,
      g_param_spec_uint ("size", "Size", "Size of the built-in filters", 1,
          GCV_MAX_KERNEL_SIZE, 5, live));
  /**
   * GstGpuConvolve:sigma:
   *
   * Width of the gaussian, sharpen, log and dog filters, in pixels.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SIGMA,
      g_param_spec_double ("sigma", "Sigma",
          "Standard deviation of gaussian, sharpen, log and dog, in pixels",
          0.001, 1000.0, 1.0, controllable));
  /**
   * GstGpuConvolve:normalize:
   *
   * Divide the kernel by its sum (when the sum is not zero), on top of scale.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_NORMALIZE,
      g_param_spec_boolean ("normalize", "Normalize",
          "Divide the kernel by its sum when that is not 0 (then times scale)",
          FALSE, live));
  /**
   * GstGpuConvolve:scale:
   *
   * Factor applied to the sum of products.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SCALE,
      g_param_spec_double ("scale", "Scale",
          "out = bias + scale * sum(K * in)", -INFINITY, INFINITY, 1.0,
          unbounded));
  /**
   * GstGpuConvolve:bias:
   *
   * Added to every output sample, in input units.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BIAS,
      g_param_spec_double ("bias", "Bias",
          "Added to every output sample, in input units", -INFINITY,
          INFINITY, 0.0, unbounded));
  /**
   * GstGpuConvolve:mode:
   *
   * Correlation (OpenCV filter2D) or convolution (K flipped in both axes,
   * anchor mirrored).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "Correlation, or convolution with the kernel flipped",
          GST_TYPE_GPU_CONVOLVE_MODE, GCV_MODE_CORRELATION, live));
  /**
   * GstGpuConvolve:anchor-x:
   *
   * Column of K over the output pixel; -1 is (kernel-width - 1) / 2.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ANCHOR_X,
      g_param_spec_int ("anchor-x", "Anchor x",
          "Kernel column over the output pixel, -1 = centre", -1,
          GCV_MAX_KERNEL_SIZE - 1, -1, live));
  /**
   * GstGpuConvolve:anchor-y:
   *
   * Row of K over the output pixel; -1 is (kernel-height - 1) / 2.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ANCHOR_Y,
      g_param_spec_int ("anchor-y", "Anchor y",
          "Kernel row over the output pixel, -1 = centre", -1,
          GCV_MAX_KERNEL_SIZE - 1, -1, live));
  /**
   * GstGpuConvolve:border:
   *
   * What is read outside the frame (OpenCV names; scipy's nearest and
   * mirror are aliases).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BORDER,
      g_param_spec_enum ("border", "Border", "What is read outside the frame",
          GST_TYPE_GPU_CONVOLVE_BORDER, GCV_BORDER_REPLICATE, live));
  /**
   * GstGpuConvolve:border-value:
   *
   * The samples outside the frame for border=constant, in input units
   * (0..255 for 8-bit formats).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BORDER_VALUE,
      g_param_spec_double ("border-value", "Border value",
          "Value outside the frame for border=constant, in input units",
          -INFINITY, INFINITY, 0.0, unbounded));
  /**
   * GstGpuConvolve:alpha:
   *
   * Copy the 4th byte of RGBA-family pixels, or filter it like a colour.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ALPHA,
      g_param_spec_enum ("alpha", "Alpha",
          "Copy alpha (and x) unchanged, or filter it like a colour channel",
          GST_TYPE_GPU_CONVOLVE_ALPHA, GCV_ALPHA_PASSTHROUGH, live));
  /**
   * GstGpuConvolve:planes:
   *
   * NV12 and I420: filter the Y plane and copy the chroma planes, or filter
   * U and V too, each at its own (half) size with the same kernel, anchor
   * and border. Other formats ignore it.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PLANES,
      g_param_spec_enum ("planes", "Planes",
          "NV12 and I420: filter the luma plane only, or all planes",
          GST_TYPE_GPU_CONVOLVE_PLANES, GCV_PLANES_LUMA, live));
  /**
   * GstGpuConvolve:separable:
   *
   * Whether rank-1 kernels use the separable path; always refuses kernels
   * that are not rank 1.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SEPARABLE,
      g_param_spec_enum ("separable", "Separable",
          "Use a separable path when the kernel is rank 1",
          GST_TYPE_GPU_CONVOLVE_SEPARABLE, GCV_SEPARABLE_AUTO, live));
  /**
   * GstGpuConvolve:algorithm:
   *
   * Forces a kernel family; auto lets the dispatcher choose. On the CPU
   * backend the CUDA-only families run the CPU's best path.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ALGORITHM,
      g_param_spec_enum ("algorithm", "Algorithm",
          "Kernel family to use, auto = tuned dispatcher",
          GST_TYPE_GPU_CONVOLVE_ALGORITHM, GCV_FAMILY_AUTO, live));
  /**
   * GstGpuConvolve:active-algorithm:
   *
   * What runs for the current caps: family, parameters and backend.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_ACTIVE_ALGORITHM,
      g_param_spec_string ("active-algorithm", "Active algorithm",
          "Family and parameters chosen for the current frame size", NULL,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstGpuConvolve:backend:
   *
   * auto: CUDA when a device is usable, else the CPU with a warning.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where to filter: auto = CUDA when usable, else CPU",
          GST_TYPE_GPU_CONVOLVE_BACKEND, GCV_BACKEND_AUTO, ready));
  /**
   * GstGpuConvolve:cuda-device-id:
   *
   * The CUDA device to use; -1 is the first usable one.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to use, -1 = first usable", -1, G_MAXINT, -1, ready));
  /**
   * GstGpuConvolve:queue-depth:
   *
   * Frames on the GPU at once; 1 is synchronous. Adds queue-depth - 1
   * frames of latency.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_QUEUE_DEPTH,
      g_param_spec_uint ("queue-depth", "Queue depth",
          "Frames in flight on the GPU (1 = synchronous)", 1, MAX_QUEUE_DEPTH,
          DEFAULT_QUEUE_DEPTH, ready));
  /**
   * GstGpuConvolve:tuning-file:
   *
   * Dispatcher table to use instead of the cached or shipped one; an empty
   * string uses none (the built-in heuristic alone). docs/tuning.md has the
   * format.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TUNING_FILE,
      g_param_spec_string ("tuning-file", "Tuning file",
          "Dispatcher table to use instead of the cached or shipped one "
          "(empty: none, the heuristic alone)",
          NULL, ready));
  /**
   * GstGpuConvolve:statistics:
   *
   * Per-frame statistics of the output, per channel or plane filtered: count,
   * sum, sum of squares, minimum and maximum with where they are, and the
   * samples above statistics-threshold. They come with each output buffer in
   * a custom meta (GstGpuConvolveStatisticsMeta) and, with post-messages, as
   * element messages. docs/statistics.md names the fields.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_STATISTICS,
      g_param_spec_boolean ("statistics", "Statistics",
          "Per-frame statistics of the output in a meta on each buffer",
          FALSE, live));
  /**
   * GstGpuConvolve:statistics-threshold:
   *
   * The statistics count the samples whose absolute value is above this, in
   * output units (0..255 for 8-bit formats, before rounding).
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_STATISTICS_THRESHOLD,
      g_param_spec_double ("statistics-threshold", "Statistics threshold",
          "The statistics count the samples whose |value| is above this",
          0.0, G_MAXDOUBLE, 0.0, controllable));
  /**
   * GstGpuConvolve:post-messages:
   *
   * Also post each frame's statistics as an element message named
   * gpuconvolve-statistics, with its timestamp, stream time, running time and
   * duration, as level and videoanalyse do.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post the statistics of each frame as an element message", FALSE,
          live));
  /**
   * GstGpuConvolve:host-register:
   *
   * Which of upstream's system memory the CUDA backend page-locks where it
   * lies, for uploads with no copy into staging: none; memory that comes
   * again in the same GstMemory; or also memory wrapped anew for each
   * buffer, which upstream must keep allocated until the element stops
   * (docs/pipeline.md).
   *
   * Since: 0.3
   */
  g_object_class_install_property (gobject_class, PROP_HOST_REGISTER,
      g_param_spec_enum ("host-register", "Host register",
          "Which of upstream's system memory is page-locked where it lies "
          "(CUDA)", GST_TYPE_GPU_CONVOLVE_HOST_REGISTER,
          GST_GPU_CONVOLVE_HOST_REGISTER_REUSED, live));
  /**
   * GstGpuConvolve:host-register-limit:
   *
   * MiB of upstream's memory kept page-locked at most; 0: none.
   *
   * Since: 0.3
   */
  g_object_class_install_property (gobject_class, PROP_HOST_REGISTER_LIMIT,
      g_param_spec_uint ("host-register-limit", "Host register limit",
          "MiB of upstream's memory kept page-locked at most (CUDA)", 0,
          MAX_HOST_REGISTER_LIMIT, DEFAULT_HOST_REGISTER_LIMIT, live));
  gst_gpu_convolve_regions_install (gobject_class, PROP_REGIONS);
}
