/* A GstAllocator of page-locked host memory (cudaHostAlloc through the
 * engine), and buffer pools of it. Memory may outlive the element that
 * allocated it, so it depends on no engine. */
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
  GError *error = NULL;
  gpointer block;
  guint8 *data;
  PinnedMemory *m;

  block = gcv_pinned_alloc (maxsize + align, &error);
  if (!block) {
    GST_WARNING ("no pinned memory of %" G_GSIZE_FORMAT " bytes: %s",
        maxsize, error->message);
    g_private_replace (&last_error, g_strdup (error->message));
    g_error_free (error);
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
  gcv_pinned_free (m->block);
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
  alloc->mem_type = GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE;
  alloc->mem_map = pinned_map;
  alloc->mem_unmap = pinned_unmap;
  alloc->mem_share = pinned_share;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *
gst_gpu_convolve_pinned_allocator_get (void)
{
  static GstAllocator *allocator = NULL;

  if (g_once_init_enter (&allocator)) {
    GstAllocator *a;
    GST_DEBUG_CATEGORY_INIT (gst_gpu_convolve_pinned_debug,
        "gpuconvolvepinned", 0, "gpuconvolve pinned memory");
    a = g_object_new (pinned_allocator_get_type (), NULL);
    gst_object_ref_sink (a);
    GST_OBJECT_FLAG_SET (a, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave (&allocator, a);
  }
  return gst_object_ref (allocator);
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

gboolean
gst_gpu_convolve_is_pinned_memory (GstMemory * mem)
{
  return mem && gst_memory_is_type (mem, GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE);
}

/* A plain buffer pool, but for a failed start: GstBufferPool keeps the
 * buffers it allocated before the one that failed (pinned memory can run
 * out), which then leak; they are freed here. */
typedef struct {
  GstBufferPool parent;
} PinnedPool;

typedef struct {
  GstBufferPoolClass parent_class;
} PinnedPoolClass;

static GType pinned_pool_get_type (void);
G_DEFINE_TYPE (PinnedPool, pinned_pool, GST_TYPE_BUFFER_POOL);

static gboolean
pinned_pool_start (GstBufferPool * pool)
{
  GstBufferPoolClass *parent = GST_BUFFER_POOL_CLASS (pinned_pool_parent_class);

  if (parent->start (pool))
    return TRUE;
  parent->stop (pool);
  return FALSE;
}

static void
pinned_pool_class_init (PinnedPoolClass * klass)
{
  GST_BUFFER_POOL_CLASS (klass)->start = pinned_pool_start;
}

static void
pinned_pool_init (PinnedPool * self)
{
}

GstBufferPool *
gst_gpu_convolve_pinned_pool_new (GstCaps * caps, gsize size, guint min,
    guint max)
{
  GstBufferPool *pool = g_object_new (pinned_pool_get_type (), NULL);
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstAllocator *allocator = gst_gpu_convolve_pinned_allocator_get ();

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
