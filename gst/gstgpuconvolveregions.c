/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions (docs/regions.md): the properties regions,
 * region-source, region-type, region-mode and region-fail, and each
 * frame's regions: the property's rectangles, the buffer's metas
 * (GstVideoRegionOfInterestMeta, and where GStreamer's analytics library
 * was found the object detections, GstAnalyticsODMtd, of its
 * GstAnalyticsRelationMeta), or both, in the pixels of the frame the
 * element filters (the crop region, where the buffer has a crop meta),
 * clipped to it. The engine filters their union (inside) or all but it
 * (outside), and copies the rest. A mask that cannot be applied as asked
 * fails closed by default, and says so on the bus. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolveenums.h"

#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

enum
{
  REGIONS,
  REGION_SOURCE,
  REGION_TYPE,
  REGION_MODE,
  REGION_FAIL,
};

/* The metas this build reads, for gst-inspect's text. */
#ifdef HAVE_GST_ANALYTICS
#define METAS "ROI metas and analytics object detections"
#else
#define METAS "ROI metas; analytics object detections need a build with " \
  "GStreamer 1.24 or later"
#endif

/* Why a frame's mask is not what was asked, worst last: the bus hears of
 * each change of it (a warning, or with region-fail=error an error). */
typedef enum
{
  NOTICE_NONE,
  NOTICE_GROWN,                 /* inside: > 256 regions, the last grown */
  NOTICE_TOO_MANY,              /* outside: > 256 regions */
  NOTICE_NONE_COVERS,           /* regions asked, none in the frame */
  NOTICE_UNREAD,                /* analytics metas this build cannot read */
} Notice;

void
gst_gpu_convolve_regions_init (GstGpuConvolve * self)
{
  self->regions = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  self->region_labels = g_array_new (FALSE, FALSE, sizeof (GQuark));
  self->frame_regions = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  self->region_source = GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY;
  self->region_mode = GCV_REGIONS_ALL;
  self->region_fail = GST_GPU_CONVOLVE_REGION_FAIL_CLOSED;
}

void
gst_gpu_convolve_regions_finalize (GstGpuConvolve * self)
{
  g_array_unref (self->regions);
  g_array_unref (self->region_labels);
  g_array_unref (self->frame_regions);
  g_free (self->region_type);
  g_free (self->regions_refused);
  g_free (self->region_message);
}

/* A value as a launch line writes it: <10, 20, -5, 8>, arrays nested. */
static gchar *
value_text (const GValue * value)
{
  GString *text;

  if (G_VALUE_HOLDS_INT (value))
    return g_strdup_printf ("%d", g_value_get_int (value));
  if (!GST_VALUE_HOLDS_ARRAY (value)) {
    gchar *s = gst_value_serialize (value);
    return s ? s : g_strdup_value_contents (value);
  }
  text = g_string_new ("<");
  for (guint i = 0; i < gst_value_array_get_size (value); i++) {
    gchar *e = value_text (gst_value_array_get_value (value, i));
    g_string_append_printf (text, "%s%s", i ? ", " : "", e);
    g_free (e);
  }
  g_string_append_c (text, '>');
  return g_string_free (text, FALSE);
}

/* A GstValueArray of <x, y, width, height> into rectangles; FALSE, with
 * the region named by its index (from 1) and its text, when one is not
 * four integers or has a negative size, or there are too many. */
static gboolean
regions_from_value (const GValue * value, GArray * out, GError ** error)
{
  const guint n = gst_value_array_get_size (value);

  if (n > GCV_MAX_REGIONS) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%u regions, %d at "
        "most: region %u and after are too many", n, GCV_MAX_REGIONS,
        GCV_MAX_REGIONS + 1);
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    const GValue *r = gst_value_array_get_value (value, i);
    gchar *text = value_text (r);
    gint v[4];
    gboolean ok = GST_VALUE_HOLDS_ARRAY (r)
        && gst_value_array_get_size (r) == 4;

    for (guint j = 0; ok && j < 4; j++) {
      const GValue *e = gst_value_array_get_value (r, j);
      ok = G_VALUE_HOLDS_INT (e);
      if (ok)
        v[j] = g_value_get_int (e);
    }
    if (!ok)
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region %u %s is "
          "not four integers <x, y, width, height>", i + 1, text);
    else if (v[2] < 0 || v[3] < 0)
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region %u %s has "
          "a negative size %dx%d", i + 1, text, v[2], v[3]);
    g_free (text);
    if (!ok || v[2] < 0 || v[3] < 0)
      return FALSE;
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

/* region-type's labels, comma-separated, into quarks; blanks around a
 * label are not part of it, and empty labels are none. */
static void
labels_from_text (const gchar * text, GArray * out)
{
  gchar **labels = g_strsplit (text ? text : "", ",", -1);

  g_array_set_size (out, 0);
  for (guint i = 0; labels[i]; i++) {
    const gchar *label = g_strstrip (labels[i]);
    if (*label) {
      const GQuark q = g_quark_from_string (label);
      g_array_append_val (out, q);
    }
  }
  g_strfreev (labels);
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
      g_clear_pointer (&self->regions_refused, g_free);
      break;
    case REGION_SOURCE:
      self->region_source = g_value_get_enum (value);
      break;
    case REGION_TYPE:
      g_free (self->region_type);
      self->region_type = g_value_dup_string (value);
      labels_from_text (self->region_type, self->region_labels);
      break;
    case REGION_MODE:
      self->region_mode = g_value_get_enum (value);
      break;
    case REGION_FAIL:
      self->region_fail = g_value_get_enum (value);
      break;
  }
  return TRUE;
}

/* A regions value was refused (the setter's warning is given): before
 * start the element keeps the reason and start() fails with it, so that a
 * mask with a typo does not run unapplied; while running the mask in
 * force stays, and the bus hears of the refused value. Not under the
 * object lock. */
void
gst_gpu_convolve_regions_refused (GstGpuConvolve * self, const GValue * value,
    const gchar * why)
{
  gchar *text = value_text (value);
  gboolean running;

  GST_OBJECT_LOCK (self);
  running = self->regions_running;
  if (!running) {
    g_free (self->regions_refused);
    self->regions_refused = g_strdup (why);
  }
  GST_OBJECT_UNLOCK (self);
  GST_DEBUG_OBJECT (self, "regions=%s refused%s: %s", text,
      running ? " while running" : "", why);
  if (running)
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("Refusing regions=%s: %s; keeping the previous regions", text,
            why), (NULL));
  g_free (text);
}

/* At start: FALSE, with the error posted, where a regions value was
 * refused since the last one taken. */
gboolean
gst_gpu_convolve_regions_start (GstGpuConvolve * self)
{
  gchar *why;

  GST_OBJECT_LOCK (self);
  why = g_strdup (self->regions_refused);
  self->regions_running = why == NULL;
  GST_OBJECT_UNLOCK (self);
  self->region_notice = NOTICE_NONE;
  if (why) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("Invalid regions: %s", why),
        ("a regions value was refused before start; set one that is taken"));
    g_free (why);
    return FALSE;
  }
  return TRUE;
}

void
gst_gpu_convolve_regions_stop (GstGpuConvolve * self)
{
  GST_OBJECT_LOCK (self);
  self->regions_running = FALSE;
  GST_OBJECT_UNLOCK (self);
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
    case REGION_FAIL:
      g_value_set_enum (value, self->region_fail);
      break;
  }
}

/* What a frame's regions came to: asked for, and past the engine's 256. */
typedef struct
{
  guint asked, beyond;
  guint unread;                 /* analytics metas left unread */
} Tally;

/* Region `index` (from 1) <x, y, w, h> in the frame's pixels, clipped to
 * the frame in 64 bits and added; past the engine's 256 it grows the last
 * one (inside: more is filtered, never less) or is left out (outside: it
 * is filtered, never less). Each decision in the log. */
static void
add_region (GstGpuConvolve * self, Tally * t, gint64 x, gint64 y, gint64 w,
    gint64 h)
{
  GArray *out = self->frame_regions;
  const gint64 fw = self->in_info.width, fh = self->in_info.height;
  const gint64 x0 = CLAMP (x, 0, fw), y0 = CLAMP (y, 0, fh);
  const gint64 x1 = CLAMP (x + w, 0, fw), y1 = CLAMP (y + h, 0, fh);
  const guint index = ++t->asked;
  GcvRect r = { (gint) x0, (gint) y0, (gint) (x1 - x0), (gint) (y1 - y0) };
  GcvRect *last;
  gint right, bottom;

  if (x1 <= x0 || y1 <= y0) {
    GST_DEBUG_OBJECT (self, "region %u <%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "> has "
        "no pixel in the %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " frame: "
        "dropped", index, x, y, w, h, fw, fh);
    return;
  }
  if (x0 != x || y0 != y || x1 != x + w || y1 != y + h)
    GST_DEBUG_OBJECT (self, "region %u <%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "> "
        "clipped to the frame: <%d, %d, %d, %d>", index, x, y, w, h, r.x, r.y,
        r.width, r.height);
  if (out->len < GCV_MAX_REGIONS) {
    g_array_append_val (out, r);
    return;
  }
  t->beyond++;
  if (self->region_mode == GCV_REGIONS_OUTSIDE) {
    GST_DEBUG_OBJECT (self, "region %u is past the %d a frame takes: "
        "dropped (outside: filtered)", index, GCV_MAX_REGIONS);
    return;
  }
  /* both in the frame: the bounding box is too */
  last = &g_array_index (out, GcvRect, out->len - 1);
  right = MAX (last->x + last->width, r.x + r.width);
  bottom = MAX (last->y + last->height, r.y + r.height);
  last->x = MIN (last->x, r.x);
  last->y = MIN (last->y, r.y);
  last->width = right - last->x;
  last->height = bottom - last->y;
  GST_DEBUG_OBJECT (self, "region %u is past the %d a frame takes: merged, "
      "region %d grown to <%d, %d, %d, %d>", index, GCV_MAX_REGIONS,
      GCV_MAX_REGIONS, last->x, last->y, last->width, last->height);
}

/* A meta's region, labelled `label`, in the buffer's pixels: taken when
 * region-type lists its label (or lists none), moved by the crop
 * origin <ox, oy> into the frame's pixels. One path for every kind of
 * meta, so that each gets the same clipping, merging and failure rules. */
static void
add_meta_region (GstGpuConvolve * self, Tally * t, GQuark label, gint64 ox,
    gint64 oy, gint64 x, gint64 y, gint64 w, gint64 h)
{
  GArray *labels = self->region_labels;
  gboolean taken = labels->len == 0;

  for (guint i = 0; i < labels->len && !taken; i++)
    taken = g_array_index (labels, GQuark, i) == label;
  if (taken)
    add_region (self, t, x - ox, y - oy, w, h);
}

#ifdef HAVE_GST_ANALYTICS
/* The object detections of an analytics relation meta, in its order. A
 * detection's location is the rectangle that bounds it, rotated or not. */
static void
add_detections (GstGpuConvolve * self, Tally * t, GstAnalyticsRelationMeta *
    meta, gint64 ox, gint64 oy)
{
  const GstAnalyticsMtdType od = gst_analytics_od_mtd_get_mtd_type ();
  gpointer state = NULL;
  GstAnalyticsODMtd mtd;

  while (gst_analytics_relation_meta_iterate (meta, &state, od, &mtd)) {
    gint x, y, w, h;
    gfloat confidence;
    if (gst_analytics_od_mtd_get_location (&mtd, &x, &y, &w, &h,
            &confidence))
      add_meta_region (self, t, gst_analytics_od_mtd_get_obj_type (&mtd),
          ox, oy, x, y, w, h);
  }
}
#endif

/* The regions from a buffer's metas, in the buffer's order, in the
 * frame's pixels. */
static void
add_meta_regions (GstGpuConvolve * self, Tally * t, GstBuffer * inbuf)
{
  /* metas are in the buffer's pixels; the frame is its crop region */
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (inbuf);
  const gint64 ox = crop ? crop->x : 0, oy = crop ? crop->y : 0;
#ifndef HAVE_GST_ANALYTICS
  const GType unread_api = g_type_from_name ("GstAnalyticsRelationMetaAPI");
#endif
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta (inbuf, &state))) {
    const GType api = meta->info->api;

    if (api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) {
      const GstVideoRegionOfInterestMeta *m =
          (const GstVideoRegionOfInterestMeta *) meta;
      add_meta_region (self, t, m->roi_type, ox, oy, m->x, m->y, m->w, m->h);
    }
#ifdef HAVE_GST_ANALYTICS
    else if (api == GST_ANALYTICS_RELATION_META_API_TYPE)
      add_detections (self, t, (GstAnalyticsRelationMeta *) meta, ox, oy);
#else
    /* built against GStreamer 1.22, run with 1.24 or later: detections
     * may be in it that a mask would silently leave out */
    else if (api == unread_api)
      t->unread++;
#endif
  }
}

/* The frame's notice for the bus, and what region-fail makes of it. */
static gchar *
notice_text (GstGpuConvolve * self, Notice notice, const Tally * t)
{
  const gboolean inside = self->region_mode == GCV_REGIONS_INSIDE;
  const gchar *then;

  if (notice == NOTICE_GROWN)
    return g_strdup_printf ("%u regions on a frame, %d at most: the last "
        "is grown to the bounding box of the rest, which filters more than "
        "asked", t->asked, GCV_MAX_REGIONS);
  if (self->region_fail == GST_GPU_CONVOLVE_REGION_FAIL_CLOSED)
    then = "; filtering the whole frame (region-fail=closed)";
  else if (self->region_fail == GST_GPU_CONVOLVE_REGION_FAIL_ERROR)
    then = " (region-fail=error)";
  else if (notice == NOTICE_TOO_MANY)
    then = "; the regions past the 256th are filtered (region-fail=open)";
  else if (notice == NOTICE_UNREAD)
    then = "; only the other regions are applied (region-fail=open)";
  else if (inside)
    then = "; the frame is passed unfiltered (region-fail=open)";
  else
    then = "; the whole frame is filtered (region-fail=open)";
  if (notice == NOTICE_UNREAD)
    return g_strdup_printf ("the buffer has %u analytics meta(s) "
        "(GstAnalyticsRelationMeta), whose object detections this build "
        "cannot read: it was built without gstreamer-analytics-1.0%s",
        t->unread, then);
  if (notice == NOTICE_TOO_MANY)
    return g_strdup_printf ("%u regions on a frame, %d at most: with "
        "region-mode=outside the rest cannot be merged without leaving "
        "pixels unfiltered%s", t->asked, GCV_MAX_REGIONS, then);
  return g_strdup_printf ("none of the %u region(s) has a pixel in the "
      "%ux%u frame%s", t->asked, self->in_info.width, self->in_info.height,
      then);
}

/* The regions of the frame of `inbuf` into `options`, which point into
 * the element's array until the next frame's; what the mask came to is
 * kept for gst_gpu_convolve_regions_report(). Under the object lock. */
void
gst_gpu_convolve_regions_for_frame (GstGpuConvolve * self, GstBuffer * inbuf,
    GcvFrameOptions * options)
{
  GArray *out = self->frame_regions;
  Tally t = { 0, 0, 0 };
  Notice notice = NOTICE_NONE;

  options->region_mode = self->region_mode;
  options->regions = NULL;
  options->n_regions = 0;
  self->frame_notice = NOTICE_NONE;
  if (self->region_mode == GCV_REGIONS_ALL)
    return;                     /* nothing to do: unset regions cost nothing */

  g_array_set_size (out, 0);
  if (self->region_source != GST_GPU_CONVOLVE_REGION_SOURCE_ROI_META)
    for (guint i = 0; i < self->regions->len; i++) {
      const GcvRect *r = &g_array_index (self->regions, GcvRect, i);
      add_region (self, &t, r->x, r->y, r->width, r->height);
    }
  if (self->region_source != GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY)
    add_meta_regions (self, &t, inbuf);

  if (t.unread > 0)
    notice = NOTICE_UNREAD;
  else if (t.asked > 0 && out->len == 0)
    notice = NOTICE_NONE_COVERS;
  else if (t.beyond > 0)
    notice = self->region_mode == GCV_REGIONS_OUTSIDE ? NOTICE_TOO_MANY :
        NOTICE_GROWN;
  if (notice >= NOTICE_TOO_MANY) {
    GST_DEBUG_OBJECT (self, "the regions cannot be applied as asked: %s",
        notice == NOTICE_TOO_MANY ? "too many for outside" :
        notice == NOTICE_UNREAD ? "analytics metas unread" :
        "none in the frame");
    /* closed: the whole frame filtered, in the mode asked (so that what
     * the mode needs, such as the same format in and out, still holds) */
    if (self->region_fail == GST_GPU_CONVOLVE_REGION_FAIL_CLOSED) {
      g_array_set_size (out, 0);
      if (self->region_mode == GCV_REGIONS_INSIDE)
        g_array_append_val (out, ((GcvRect) { 0, 0,
                    (gint) self->in_info.width,
                    (gint) self->in_info.height }));
    }
  }
  /* a change of mode or region-fail changes what the frame gets too */
  self->frame_notice = notice ? notice | self->region_fail << 4
      | self->region_mode << 8 : NOTICE_NONE;
  self->frame_fails = notice >= NOTICE_TOO_MANY
      && self->region_fail == GST_GPU_CONVOLVE_REGION_FAIL_ERROR;
  if (self->frame_notice != self->region_notice || self->frame_fails) {
    g_free (self->region_message);
    self->region_message = notice ? notice_text (self, notice, &t) : NULL;
  }
  options->regions = (const GcvRect *) out->data;
  options->n_regions = out->len;
}

/* After the frame's regions were taken, not under the object lock: a
 * change in what the mask came to is posted once, as a warning; FALSE,
 * with an error posted, where region-fail=error stops the stream. */
gboolean
gst_gpu_convolve_regions_report (GstGpuConvolve * self)
{
  if (G_LIKELY (self->frame_notice == self->region_notice
          && !self->frame_fails))
    return TRUE;
  self->region_notice = self->frame_notice;
  if (self->frame_fails) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Privacy regions cannot be "
            "applied: %s", self->region_message), (NULL));
    return FALSE;
  }
  if (self->frame_notice == NOTICE_NONE)
    GST_INFO_OBJECT (self, "the regions are applied as asked again");
  else
    GST_ELEMENT_WARNING (self, STREAM, FAILED, ("Privacy regions not "
            "applied as asked: %s", self->region_message), (NULL));
  return TRUE;
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
   * metas (roi-meta), or both. The metas are its
   * GstVideoRegionOfInterestMeta and, in a build with GStreamer's
   * analytics library (GStreamer 1.24 and later), the object detections
   * (GstAnalyticsODMtd) of its GstAnalyticsRelationMeta; only those whose
   * label region-type lists, when it lists any.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_SOURCE,
      g_param_spec_enum ("region-source", "Region source",
          "Where the regions come from: the property, the buffer's metas "
          "(" METAS "), or both",
          GST_TYPE_GPU_CONVOLVE_REGION_SOURCE,
          GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY, live));
  /**
   * GstGpuConvolve:region-type:
   *
   * With region-source roi-meta or both: only the metas of these labels,
   * separated by commas (for example `face` or `face,person`): a ROI
   * meta's type, an object detection's object type. Empty or unset takes
   * every one.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_TYPE,
      g_param_spec_string ("region-type", "Region type",
          "Only metas of these labels, comma-separated (a ROI meta's type, "
          "an object detection's object type; e.g. face,person); empty: all",
          NULL, live));
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
  /**
   * GstGpuConvolve:region-fail:
   *
   * What a frame gets when regions were asked for (region-mode inside or
   * outside) but cannot be applied as asked: none has a pixel in the
   * frame, (outside) a frame has more than 256, or its analytics metas
   * cannot be read (a build without GStreamer's analytics library, run
   * with 1.24 or later). closed filters the whole frame, error stops
   * the stream, open filters what the regions allow; closed and open
   * post a warning at each change.
   * docs/regions.md.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, first + REGION_FAIL,
      g_param_spec_enum ("region-fail", "Region failure",
          "When regions cannot be applied as asked: filter the whole frame "
          "(closed), stop with an error, or filter what they allow (open)",
          GST_TYPE_GPU_CONVOLVE_REGION_FAIL,
          GST_GPU_CONVOLVE_REGION_FAIL_CLOSED, live));
}
