/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GstAllocators of frames, page-locked host memory (cudaHostAlloc through
 * the engine) for the CUDA backend and plain system memory for the CPU, and
 * buffer pools of them. An allocation that fails returns NULL, with its
 * reason kept for the element, where GStreamer's default allocator aborts
 * the process (g_malloc). Memory may outlive the element that allocated it,
 * so it depends on no engine. */
#include "gstgpuconvolvepinned.h"
#include "gcv-interop.h"

GST_DEBUG_CATEGORY_STATIC (gst_gpu_convolve_pinned_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_pinned_debug

typedef struct {
  GstMemory mem;
  gpointer block;               /* what was allocated (NULL for a share) */
  guint8 *data;                 /* aligned start of maxsize bytes */
} PinnedMemory;

typedef struct {
  GstAllocator parent;
  gboolean pinned;              /* page-locked; else plain system memory */
} PinnedAllocator;

typedef struct {
  GstAllocatorClass parent_class;
} PinnedAllocatorClass;

static GType pinned_allocator_get_type (void);

/* The reason of the last failed allocation, per thread: pools allocate in
 * the thread that acquires, and GstBufferPool passes no error on, so the
 * element reads it from here to say what went wrong (docs/errors.md). */
static GPrivate last_error = G_PRIVATE_INIT (g_free);

G_DEFINE_TYPE (PinnedAllocator, pinned_allocator, GST_TYPE_ALLOCATOR);

static void
debug_init (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_gpu_convolve_pinned_debug,
        "gpuconvolvepinned", 0, "gpuconvolve frame memory");
    g_once_init_leave (&done, 1);
  }
}

static PinnedMemory *
pinned_memory_new (GstAllocator * allocator, GstMemory * parent,
    gpointer block, guint8 * data, GstMemoryFlags flags, gsize maxsize,
    gsize align, gsize offset, gsize size)
{
  PinnedMemory *m = g_new0 (PinnedMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (m), flags, allocator, parent, maxsize,
      align, offset, size);
  m->block = block;
  m->data = data;
  return m;
}

static GstMemory *
pinned_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  gsize align = params->align | gst_memory_alignment;
  gsize maxsize = size + params->prefix + params->padding;
  gpointer block = NULL;
  gchar *reason = NULL;
  guint8 *data;
  PinnedMemory *m;

  if (maxsize < size || maxsize + align < maxsize) {
    reason = g_strdup_printf ("a buffer of %" G_GSIZE_FORMAT " bytes is too "
        "large", size);
  } else if (((PinnedAllocator *) allocator)->pinned) {
    GError *error = NULL;
    if (!(block = gcv_pinned_alloc (maxsize + align, &error))) {
      reason = g_strdup (error->message);
      g_error_free (error);
    }
  } else if (!(block = g_try_malloc (maxsize + align))) {
    reason = g_strdup_printf ("could not allocate %" G_GSIZE_FORMAT " bytes "
        "of system memory", maxsize + align);
  }
  if (!block) {
    GST_WARNING ("no memory for a buffer of %" G_GSIZE_FORMAT " bytes: %s",
        maxsize, reason);
    g_private_replace (&last_error, reason);
    return NULL;
  }
  /* align is a mask: round up to the next multiple of align + 1 */
  data = (guint8 *) (((guintptr) block + align) & ~(guintptr) align);
  m = pinned_memory_new (allocator, NULL, block, data, params->flags, maxsize,
      align, params->prefix, size);
  return GST_MEMORY_CAST (m);
}

static void
pinned_free (GstAllocator * allocator, GstMemory * mem)
{
  PinnedMemory *m = (PinnedMemory *) mem;
  if (((PinnedAllocator *) allocator)->pinned)
    gcv_pinned_free (m->block);
  else
    g_free (m->block);
  g_free (m);
}

static gpointer
pinned_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((PinnedMemory *) mem)->data;
}

static void
pinned_unmap (GstMemory * mem)
{
}

static GstMemory *
pinned_share (GstMemory * mem, gssize offset, gssize size)
{
  PinnedMemory *m = (PinnedMemory *) mem;
  GstMemory *parent = mem->parent ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;
  return GST_MEMORY_CAST (pinned_memory_new (mem->allocator, parent, NULL,
          m->data, GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
          mem->maxsize, mem->align, mem->offset + offset, size));
}

static void
pinned_allocator_class_init (PinnedAllocatorClass * klass)
{
  GstAllocatorClass *alloc_class = GST_ALLOCATOR_CLASS (klass);
  alloc_class->alloc = pinned_alloc;
  alloc_class->free = pinned_free;
}

static void
pinned_allocator_init (PinnedAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR (self);
  alloc->mem_map = pinned_map;
  alloc->mem_unmap = pinned_unmap;
  alloc->mem_share = pinned_share;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

static GstAllocator *
allocator_new (gboolean pinned)
{
  PinnedAllocator *a;

  debug_init ();
  a = g_object_new (pinned_allocator_get_type (), NULL);
  a->pinned = pinned;
  GST_ALLOCATOR (a)->mem_type = pinned ? GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE :
      GST_GPU_CONVOLVE_SYSTEM_MEMORY_TYPE;
  gst_object_ref_sink (a);
  GST_OBJECT_FLAG_SET (a, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  return GST_ALLOCATOR (a);
}

GstAllocator *
gst_gpu_convolve_allocator_get (gboolean pinned)
{
  static GstAllocator *allocators[2] = { NULL, NULL };
  GstAllocator **allocator = &allocators[pinned ? 1 : 0];

  if (g_once_init_enter (allocator))
    g_once_init_leave (allocator, allocator_new (pinned));
  return gst_object_ref (*allocator);
}

gchar *
gst_gpu_convolve_pinned_take_error (void)
{
  gchar *reason = g_private_get (&last_error);

  if (reason) {
    reason = g_strdup (reason);
    g_private_replace (&last_error, NULL);
  }
  return reason;
}

void
gst_gpu_convolve_post_alloc_error (GstElement * element, const gchar * what)
{
  gchar *reason = gst_gpu_convolve_pinned_take_error ();

  debug_init ();
  GST_ELEMENT_ERROR (element, RESOURCE, FAILED, ("Could not allocate %s: %s",
          what, reason ? reason : "the buffer pool has none"), (NULL));
  g_free (reason);
}

gboolean
gst_gpu_convolve_is_pinned_memory (GstMemory * mem)
{
  return mem && gst_memory_is_type (mem, GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE);
}

/* A plain buffer pool, but for a failed start: GstBufferPool keeps the
 * buffers it allocated before the one that failed (memory can run out),
 * which then leak; they are freed here. A pool that upstream fills says
 * why it failed on its owner's bus, as upstream only says it could not
 * go on (videotestsrc: "not-negotiated"). */
typedef struct {
  GstBufferPool parent;
  GWeakRef owner;               /* GstElement, for a pool that upstream fills */
} PinnedPool;

typedef struct {
  GstBufferPoolClass parent_class;
} PinnedPoolClass;

static GType pinned_pool_get_type (void);
G_DEFINE_TYPE (PinnedPool, pinned_pool, GST_TYPE_BUFFER_POOL);

static void
pinned_pool_report (GstBufferPool * pool, const gchar * what)
{
  GstElement *owner = g_weak_ref_get (&((PinnedPool *) pool)->owner);

  if (owner) {
    gst_gpu_convolve_post_alloc_error (owner, what);
    gst_object_unref (owner);
  }
}

static gboolean
pinned_pool_start (GstBufferPool * pool)
{
  GstBufferPoolClass *parent = GST_BUFFER_POOL_CLASS (pinned_pool_parent_class);

  if (parent->start (pool))
    return TRUE;
  parent->stop (pool);
  pinned_pool_report (pool, "input buffers");
  return FALSE;
}

static GstFlowReturn
pinned_pool_alloc_buffer (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  GstBufferPoolClass *parent = GST_BUFFER_POOL_CLASS (pinned_pool_parent_class);
  GstFlowReturn ret = parent->alloc_buffer (pool, buffer, params);

  /* while active, the pool grows; a failed start is reported above */
  if (ret == GST_FLOW_ERROR && gst_buffer_pool_is_active (pool))
    pinned_pool_report (pool, "an input buffer");
  return ret;
}

static void
pinned_pool_finalize (GObject * object)
{
  g_weak_ref_clear (&((PinnedPool *) object)->owner);
  G_OBJECT_CLASS (pinned_pool_parent_class)->finalize (object);
}

static void
pinned_pool_class_init (PinnedPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = pinned_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->start = pinned_pool_start;
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = pinned_pool_alloc_buffer;
}

static void
pinned_pool_init (PinnedPool * self)
{
  g_weak_ref_init (&self->owner, NULL);
}

void
gst_gpu_convolve_pool_report_to (GstBufferPool * pool, GstElement * element)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (pool, pinned_pool_get_type ()))
    g_weak_ref_set (&((PinnedPool *) pool)->owner, element);
}

GstBufferPool *
gst_gpu_convolve_pool_new (GstCaps * caps, gsize size, guint min, guint max,
    gboolean pinned)
{
  GstBufferPool *pool = g_object_new (pinned_pool_get_type (), NULL);
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstAllocator *allocator = gst_gpu_convolve_allocator_get (pinned);

  gst_object_ref_sink (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator (config, allocator, NULL);
  gst_object_unref (allocator);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return NULL;
  }
  return pool;
}
