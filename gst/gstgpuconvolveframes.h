/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Frames in flight: the element's side of the engine's ring. Each frame
 * holds its mapped input and output buffers until the engine is done with
 * them, and the events that came after it, which go downstream right after
 * its output. The engine owns the slots (gcv_plan_submit() hands out a
 * ticket) and says how many frames a plan holds. */
#ifndef __GST_GPU_CONVOLVE_FRAMES_H__
#define __GST_GPU_CONVOLVE_FRAMES_H__

#include <gst/gst.h>
#include "gcv.h"

G_BEGIN_DECLS

typedef struct
{
  GstBuffer *inbuf, *outbuf;
  GstMapInfo in_map, out_map;
  GcvTicket ticket;
  guint64 release;              /* its input with the release thread */
  GQueue events;
  /* what the frame asked for: statistics, as a meta on its output and, with
   * post_messages, on the bus; `channels` names them */
  GcvFrameOptions options;
  gboolean post_messages;
  const gchar *const *channels;
} GstGpuConvolveFrame;

typedef struct _GstGpuConvolveFrames GstGpuConvolveFrames;

/* Errors are posted from `element`; outputs and events go to `srcpad`. */
GstGpuConvolveFrames *gst_gpu_convolve_frames_new (GstElement * element,
    GstPad * srcpad);
void gst_gpu_convolve_frames_free (GstGpuConvolveFrames * frames);

/* A frame for `inbuf` (taken), to fill and then add or free. */
GstGpuConvolveFrame *gst_gpu_convolve_frame_new (GstBuffer * inbuf);
void gst_gpu_convolve_frame_free (GstGpuConvolveFrame * frame);

/* The frame's input, uploaded from upstream's memory registered as `reg`,
 * given back once `plan`'s upload of it ends, while the frames after it
 * are taken (gstgpuconvolverelease.h); the frame is finished after that. */
void gst_gpu_convolve_frames_give_back (GstGpuConvolveFrames * frames,
    GstGpuConvolveFrame * frame, GcvPlan * plan, gpointer reg);

guint gst_gpu_convolve_frames_count (GstGpuConvolveFrames * frames);
/* A frame submitted to the engine, newest. */
void gst_gpu_convolve_frames_add (GstGpuConvolveFrames * frames,
    GstGpuConvolveFrame * frame);
/* Keeps `event` (taken) behind the newest frame; FALSE (and not taken)
 * when no frame is in flight. */
gboolean gst_gpu_convolve_frames_hold_event (GstGpuConvolveFrames * frames,
    GstEvent * event);
/* Sends the events that followed the frame pushed last. */
void gst_gpu_convolve_frames_send_events (GstGpuConvolveFrames * frames);
/* Waits for the oldest frame and hands back its output buffer; its events
 * are sent with the next send_events(), once the buffer is pushed. */
GstFlowReturn gst_gpu_convolve_frames_finish_oldest (GstGpuConvolveFrames *
    frames, GcvPlan * plan, GstBuffer ** outbuf);
/* Pushes every frame downstream, oldest first, each with its events. */
GstFlowReturn gst_gpu_convolve_frames_drain (GstGpuConvolveFrames * frames,
    GcvPlan * plan);
/* Drops every frame and event, once the engine is done with their memory
 * (`plan` may be NULL when it is gone). */
void gst_gpu_convolve_frames_discard (GstGpuConvolveFrames * frames,
    GcvPlan * plan);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_FRAMES_H__ */
