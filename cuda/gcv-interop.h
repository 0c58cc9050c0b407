/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve engine: CUDA interop for applications that keep frames on the
 * GPU or in page-locked memory, next to gcv.h.
 *
 * Frames on the device: a GcvImage with on_device set holds a device
 * pointer (CUDA backend only). The functions below return NULL / FALSE on
 * the CPU backend. Interop is by slot: a frame's slot is its ticket modulo
 * the plan's capacity (gcv_plan_get_capacity()), so with a capacity of 1
 * every frame runs in slot 0.
 */
#ifndef GCV_INTEROP_H
#define GCV_INTEROP_H

#include "gcv.h"

G_BEGIN_DECLS

/* A CUDA engine whose work all runs in `cu_context` (a CUcontext, such as
 * the one GStreamer's CUDA elements share), on that context's device, so
 * that device pointers of that context can be given as frames. The caller
 * keeps the context alive until the engine and its plans are freed. Each
 * engine call makes the context current on the calling thread. */
GCV_API GcvEngine *gcv_engine_new_for_context (gpointer cu_context,
    GError ** error);
/* The CUDA device the engine runs on; -1 on the CPU backend. */
GCV_API gint gcv_engine_get_device (GcvEngine * engine);
/* The cudaStream_t that frames of `slot` run on (for timing with events). */
GCV_API gpointer gcv_plan_get_cuda_stream (GcvPlan * plan, guint slot);
/* The cudaStream_ts the next frame submitted to `plan` will run on: one, or
 * one per plane (at most 3) for NV12, I420 and P010_10LE, whose planes run
 * on plans of their own (NV12's and P010's U and V on one where they are
 * copied, planes=luma). Fills up to `n` of `streams` and returns how many there
 * are; 0 on the CPU backend. Asked before the frame is submitted, they let
 * the caller order the frame's work after other streams' with events. */
GCV_API guint gcv_plan_get_next_cuda_streams (GcvPlan * plan,
    gpointer * streams, guint n);
/* The pitched device buffer that holds the input of `slot` (input format).
 * A frame written there and submitted with src->data equal to img->data and
 * src->on_device set is used in place, with no copy. Valid until the plan's
 * filter changes; usable from any stream once the plan or filter is set. */
GCV_API gboolean gcv_plan_get_device_input (GcvPlan * plan, guint slot,
    GcvImage * img);
/* Whether the host input of frame `ticket` (submitted, not yet waited
 * for) is read no more, so that the caller may reuse it before the frame's
 * wait: *done once an input copied into staging at the submit (pageable
 * memory, CUDA) was; a page-locked input is read by the frame's upload,
 * which `wait` waits for (without it, *done if the upload has ended). A
 * device input is not done. FALSE with an error where the wait fails. */
GCV_API gboolean gcv_plan_input_done (GcvPlan * plan, GcvTicket ticket,
    gboolean wait, gboolean * done, GError ** error);
/* Page-locked host memory for frames (plain memory on the CPU backend). */
GCV_API gpointer gcv_engine_host_alloc (GcvEngine * engine, gsize size,
    GError ** error);
GCV_API void gcv_engine_host_free (GcvEngine * engine, gpointer mem);
/* Page-locked host memory usable with any device, with no engine needed (it
 * may outlive one); NULL with an error where CUDA is not usable. */
GCV_API gpointer gcv_pinned_alloc (gsize size, GError ** error);
GCV_API void gcv_pinned_free (gpointer mem);
/* Host memory of the caller's, `size` bytes from `mem`, page-locked for
 * every device (cudaHostRegister) so that uploads read it where it lies;
 * FALSE with an error where it cannot be (memory mapped read-only, or
 * registered already, or no CUDA). The caller unregisters it before the
 * memory is freed, and not while a frame's upload reads it. */
GCV_API gboolean gcv_host_register (gpointer mem, gsize size,
    GError ** error);
GCV_API void gcv_host_unregister (gpointer mem);
/* Device memory in use on a CUDA device, by every process, and its total
 * (cudaMemGetInfo); FALSE with an error where CUDA is not usable. */
GCV_API gboolean gcv_device_memory (gint device_id, gsize * used, gsize * total,
    GError ** error);

G_END_DECLS

#endif /* GCV_INTEROP_H */
