/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions (docs/regions.md): the properties regions,
 * region-source, region-type and region-mode, and each frame's regions:
 * the property's rectangles, the buffer's GstVideoRegionOfInterestMeta, or
 * both, in the pixels of the frame the element filters (the crop region,
 * where the buffer has a crop meta). The engine filters their union
 * (inside) or all but it (outside), and copies the rest. */
#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolveenums.h"

#include <gst/video/video.h>

enum
{
  REGIONS,
  REGION_SOURCE,
  REGION_TYPE,
  REGION_MODE,
};

void
gst_gpu_convolve_regions_init (GstGpuConvolve * self)
{
  self->regions = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  self->frame_regions = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  self->region_source = GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY;
  self->region_mode = GCV_REGIONS_ALL;
}

void
gst_gpu_convolve_regions_finalize (GstGpuConvolve * self)
{
  g_array_unref (self->regions);
  g_array_unref (self->frame_regions);
  g_free (self->region_type);
}

/* A GstValueArray of <x, y, width, height> into rectangles; FALSE, with
 * the region named, when one is not four integers or has a negative
 * size. */
static gboolean
regions_from_value (const GValue * value, GArray * out, GError ** error)
{
  const guint n = gst_value_array_get_size (value);

  if (n > GCV_MAX_REGIONS) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%u regions, %d at "
        "most", n, GCV_MAX_REGIONS);
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    const GValue *r = gst_value_array_get_value (value, i);
    gint v[4];

    if (!GST_VALUE_HOLDS_ARRAY (r) || gst_value_array_get_size (r) != 4) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region %u is not "
          "<x, y, width, height>", i + 1);
      return FALSE;
    }
    for (guint j = 0; j < 4; j++) {
      const GValue *e = gst_value_array_get_value (r, j);
      if (!G_VALUE_HOLDS_INT (e)) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region %u: "
            "value %u is a %s, not an integer", i + 1, j + 1,
            G_VALUE_TYPE_NAME (e));
        return FALSE;
      }
      v[j] = g_value_get_int (e);
    }
    if (v[2] < 0 || v[3] < 0) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region %u has a "
          "negative size %dx%d", i + 1, v[2], v[3]);
      return FALSE;
    }
    g_array_append_val (out, ((GcvRect) { v[0], v[1], v[2], v[3] }));
  }
  return TRUE;
}

static void
value_from_regions (GValue * value, const GArray * regions)
{
  g_value_reset (value);
  for (guint i = 0; i < regions->len; i++) {
    const GcvRect *r = &g_array_index (regions, GcvRect, i);
    const gint v[4] = { r->x, r->y, r->width, r->height };
    GValue region = G_VALUE_INIT, e = G_VALUE_INIT;

    gst_value_array_init (&region, 4);
    g_value_init (&e, G_TYPE_INT);
    for (guint j = 0; j < 4; j++) {
      g_value_set_int (&e, v[j]);
      gst_value_array_append_value (&region, &e);
    }
    gst_value_array_append_and_take_value (value, &region);
    g_value_unset (&e);
  }
}

/* Under the object lock; `id` counts from the first region property.
 * FALSE, with `error`, when the value is refused (the old one kept). */
gboolean
gst_gpu_convolve_regions_set_property (GstGpuConvolve * self, guint id,
    const GValue * value, GError ** error)
{
  GArray *regions;

  switch (id) {
    case REGIONS:
      regions = g_array_new (FALSE, FALSE, sizeof (GcvRect));
      if (!regions_from_value (value, regions, error)) {
        g_array_unref (regions);
        return FALSE;
      }
      g_array_unref (self->regions);
      self->regions = regions;
      break;
    case REGION_SOURCE:
      self->region_source = g_value_get_enum (value);
      break;
    case REGION_TYPE:
      g_free (self->region_type);
      self->region_type = g_value_dup_string (value);
      break;
    case REGION_MODE:
      self->region_mode = g_value_get_enum (value);
      break;
  }
  return TRUE;
}

/* Under the object lock. */
void
gst_gpu_convolve_regions_get_property (GstGpuConvolve * self, guint id,
    GValue * value)
{
  switch (id) {
    case REGIONS:
      value_from_regions (value, self->regions);
      break;
    case REGION_SOURCE:
      g_value_set_enum (value, self->region_source);
      break;
    case REGION_TYPE:
      g_value_set_string (value, self->region_type);
      break;
    case REGION_MODE:
      g_value_set_enum (value, self->region_mode);
      break;
  }
}

/* A region from a meta, in the frame's pixels. */
static void
add_meta_region (GstGpuConvolve * self, const GstVideoRegionOfInterestMeta
    * m, gint64 origin_x, gint64 origin_y)
{
  GArray *out = self->frame_regions;
  GcvRect r = {
    (gint) CLAMP ((gint64) m->x - origin_x, G_MININT, G_MAXINT),
    (gint) CLAMP ((gint64) m->y - origin_y, G_MININT, G_MAXINT),
    (gint) MIN (m->w, (guint) G_MAXINT), (gint) MIN (m->h, (guint) G_MAXINT)
  };

  if (out->len < GCV_MAX_REGIONS) {
    g_array_append_val (out, r);
    return;
  }
  /* More than the engine takes: the last grows to cover this one too, so
   * that no region is left unfiltered (inside) or filtered (outside). */
  {
    GcvRect *last = &g_array_index (out, GcvRect, out->len - 1);
    const gint64 x0 = MIN (last->x, r.x), y0 = MIN (last->y, r.y);
    const gint64 x1 = MAX ((gint64) last->x + last->width,
        (gint64) r.x + r.width);
    const gint64 y1 = MAX ((gint64) last->y + last->height,
        (gint64) r.y + r.height);
    *last = (GcvRect) { (gint) x0, (gint) y0,
      (gint) MIN (x1 - x0, G_MAXINT), (gint) MIN (y1 - y0, G_MAXINT)
    };
    GST_LOG_OBJECT (self, "more than %d regions: the last one grown",
        GCV_MAX_REGIONS);
  }
}

/* The regions of the frame of `inbuf` into `options`, which point into
 * the element's array until the next frame's. Under the object lock. */
void
gst_gpu_convolve_regions_for_frame (GstGpuConvolve * self, GstBuffer * inbuf,
    GcvFrameOptions * options)
{
  GArray *out = self->frame_regions;

  g_array_set_size (out, 0);
  options->region_mode = self->region_mode;
  if (self->region_mode != GCV_REGIONS_ALL) {
    if (self->region_source != GST_GPU_CONVOLVE_REGION_SOURCE_ROI_META)
      g_array_append_vals (out, self->regions->data, self->regions->len);
    if (self->region_source != GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY) {
      /* metas are in the buffer's pixels; the frame is its crop region */
      GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (inbuf);
      const gint64 ox = crop ? crop->x : 0, oy = crop ? crop->y : 0;
      const gboolean any_type = !self->region_type || !*self->region_type;
      gpointer state = NULL;
      GstMeta *meta;

      while ((meta = gst_buffer_iterate_meta_filtered (inbuf, &state,
                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
        const GstVideoRegionOfInterestMeta *m =
            (const GstVideoRegionOfInterestMeta *) meta;
        if (any_type || g_strcmp0 (g_quark_to_string (m->roi_type),
                self->region_type) == 0)
          add_meta_region (self, m, ox, oy);
      }
    }
  }
  options->regions = (const GcvRect *) out->data;
  options->n_regions = out->len;
}

/* The properties, from the plugin's property table (`first` is the id of
 * the first). */
void
gst_gpu_convolve_regions_install (GObjectClass * gobject_class, guint first)
{
  const GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
      | GST_PARAM_MUTABLE_PLAYING;

  /**
   * GstGpuConvolve:regions:
   *
   * Rectangles <x, y, width, height> in frame pixels, for region-mode
   * inside or outside: for example
   * `regions="<<10,20,200,100>,<400,40,64,64>>"`. Parts outside the frame
   * are ignored, as are rectangles of no area; overlaps are the union.
   * docs/regions.md.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGIONS,
      gst_param_spec_array ("regions", "Regions",
          "Rectangles <x, y, width, height> in frame pixels, e.g. "
          "<<10,20,200,100>,<400,40,64,64>>",
          gst_param_spec_array ("region", "Region",
              "<x, y, width, height>",
              g_param_spec_int ("value", "Value", "x, y, width or height",
                  G_MININT, G_MAXINT, 0, live), live), live));
  /**
   * GstGpuConvolve:region-source:
   *
   * Where a frame's regions come from: the regions property, the buffer's
   * GstVideoRegionOfInterestMeta (only those of region-type, when it is
   * set), or both.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_SOURCE,
      g_param_spec_enum ("region-source", "Region source",
          "Where the regions come from: the property, the buffer's ROI "
          "metas, or both", GST_TYPE_GPU_CONVOLVE_REGION_SOURCE,
          GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY, live));
  /**
   * GstGpuConvolve:region-type:
   *
   * With region-source roi-meta or both: only the metas of this type (for
   * example `face`); empty or unset takes every one.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_TYPE,
      g_param_spec_string ("region-type", "Region type",
          "Only ROI metas of this type (e.g. face); empty: all", NULL, live));
  /**
   * GstGpuConvolve:region-mode:
   *
   * all filters the whole frame; inside only the regions (redaction);
   * outside all but them. Elsewhere the input is copied.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_MODE,
      g_param_spec_enum ("region-mode", "Region mode",
          "Filter the whole frame, only inside the regions, or outside them",
          GST_TYPE_GPU_CONVOLVE_REGION_MODE, GCV_REGIONS_ALL, live));
}
