/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upstream's system memory page-locked where it lies (cudaHostRegister,
 * gcv_host_register()), so that the CUDA backend uploads a frame from it
 * with no copy into staging: a cache of registrations keyed by the host
 * range a frame's memory maps to, for the process (CUDA's registrations
 * are the process's), each entry its element's.
 *
 * A range is registered the second time it comes (a range seen once is
 * staged), within its element's limit of bytes, the least recently used
 * of its element's given up for room. A registration must end before its
 * memory may be freed: with the GstMemory's life (a weak reference, whose
 * notify comes before the memory is freed), unless the element was told
 * that upstream keeps its memory allocated until the element stops
 * (host-register=kept: memory wrapped anew for each buffer); then at stop.
 * A range reused at another size is registered anew. A registration that
 * fails (memory mapped read-only, registered by another) stages that
 * range's frames, said once at INFO. A frame's upload from a registration
 * holds it busy (acquire() to release()): a memory freed meanwhile waits
 * for it. The process tracks MAX_ENTRIES ranges; with all of them tied
 * to live memories, a new range is staged. */
#include "gstgpuconvolvehostreg.h"
#include "gcv-interop.h"

GST_DEBUG_CATEGORY_EXTERN (gst_gpu_convolve_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_debug

/* ranges tracked, registered or seen once, for all elements */
#define MAX_ENTRIES 64

typedef struct {
  gpointer owner;               /* the element; NULL: a free entry */
  guint8 *ptr;
  gsize size;
  GstMemory *mem;               /* whose life it has (no reference);
                                 * NULL: kept until its element stops */
  guint gen;                    /* told apart from an earlier use's */
  gboolean registered, refused;
  guint busy;                   /* frames uploading from it */
  guint64 used;                 /* last use, for the least recent */
} Entry;

static GMutex lock;
static GCond idle;
static Entry entries[MAX_ENTRIES];
static guint64 use_clock;

/* the weak reference's data: which entry, and which use of it */
#define TOKEN(i, gen) GSIZE_TO_POINTER (((gsize) (gen) << 8) | (i))

static void memory_gone (gpointer data, GstMiniObject * obj);

/* The entry's registration undone (lock held; not busy). */
static void
unregister (Entry * e)
{
  if (e->registered) {
    gcv_host_unregister (e->ptr);
    GST_DEBUG_OBJECT (e->owner, "host memory %p (%" G_GSIZE_FORMAT " bytes) "
        "no longer page-locked", e->ptr, e->size);
  }
  e->registered = FALSE;
}

/* The entry free (lock held; not busy). A weak reference it had stays on
 * its memory (taking it back could meet the memory's finalization on
 * another thread), told apart by the entry's next use: so entries with a
 * weak reference are freed only when their memory goes, or at their
 * element's stop, and a memory gathers no more than one a stop. */
static void
drop (Entry * e)
{
  unregister (e);
  e->owner = NULL;
  e->ptr = NULL;
  e->mem = NULL;
  e->refused = FALSE;
  e->gen++;
}

/* A memory with entries is being freed (any thread): its registration
 * ends first, once no upload reads it. */
static void
memory_gone (gpointer data, GstMiniObject * obj)
{
  gsize token = GPOINTER_TO_SIZE (data);
  Entry *e = &entries[token & 0xff];

  g_mutex_lock (&lock);
  while (e->owner && e->gen == (guint) (token >> 8) && e->busy)
    g_cond_wait (&idle, &lock);
  if (e->owner && e->gen == (guint) (token >> 8))
    drop (e);
  g_mutex_unlock (&lock);
}

/* A free entry, else the least recently used one that is neither busy
 * nor tied to a memory's life (drop()), made free; NULL where there is
 * none: that range is staged. */
static Entry *
free_entry (void)
{
  Entry *lru = NULL;

  for (guint i = 0; i < MAX_ENTRIES; i++) {
    Entry *e = &entries[i];
    if (!e->owner)
      return e;
    if (!e->busy && !e->mem && (!lru || e->used < lru->used))
      lru = e;
  }
  if (lru)
    drop (lru);
  return lru;
}

/* Room for `size` more registered bytes of `owner` within `limit`, its
 * least recently used registrations given up for it (never `keep`); an
 * entry tied to a memory's life stays, unregistered, to be registered
 * again when its memory comes again. */
static gboolean
make_room (gpointer owner, gsize size, guint64 limit, Entry * keep)
{
  for (;;) {
    guint64 held = 0;
    Entry *lru = NULL;
    for (guint i = 0; i < MAX_ENTRIES; i++) {
      Entry *e = &entries[i];
      if (e->owner != owner || !e->registered)
        continue;
      held += e->size;
      if (e != keep && !e->busy && (!lru || e->used < lru->used))
        lru = e;
    }
    if (held + size <= limit)
      return TRUE;
    if (!lru)
      return FALSE;
    if (lru->mem)
      unregister (lru);
    else
      drop (lru);
  }
}

gpointer
gst_gpu_convolve_hostreg_acquire (gpointer owner, GstMemory * mem,
    gpointer data, gsize size, guint64 limit, gboolean kept)
{
  GstMemory *root = mem;
  Entry *e = NULL;
  GError *error = NULL;

  while (root->parent)
    root = root->parent;
  /* memory whose mapping is its own for its life: system memory */
  if (!data || !size || !gst_memory_is_type (root, GST_ALLOCATOR_SYSMEM))
    return NULL;
  g_mutex_lock (&lock);
  /* registered for another element: the engine reads it where it lies
   * (it is page-locked), so this frame's upload holds it busy too */
  for (guint i = 0; i < MAX_ENTRIES && !e; i++)
    if (entries[i].registered && entries[i].ptr == data
        && entries[i].size == size)
      e = &entries[i];
  for (guint i = 0; i < MAX_ENTRIES && !e; i++)
    if (entries[i].owner == owner && entries[i].ptr == data)
      e = &entries[i];
  /* the same start with another size: not the range registered; an
   * entry of this memory's life takes the new range, seen once */
  if (e && e->size != size && !e->busy && e->mem && e->mem == root) {
    unregister (e);
    e->size = size;
    e->refused = FALSE;
    e->used = ++use_clock;
    g_mutex_unlock (&lock);
    return NULL;
  }
  if (e && e->size != size && !e->busy) {
    drop (e);
    e = NULL;
  }
  if (!e || e->size != size) {
    /* seen for the first time: staged */
    if ((e = free_entry ())) {
      e->owner = owner;
      e->ptr = data;
      e->size = size;
      e->used = ++use_clock;
      if (!kept) {
        e->mem = root;
        gst_mini_object_weak_ref (GST_MINI_OBJECT_CAST (root), memory_gone,
            TOKEN (e - entries, e->gen));
      }
    }
    g_mutex_unlock (&lock);
    return NULL;
  }
  e->used = ++use_clock;
  if (!e->registered && !e->refused && make_room (owner, size, limit, e)) {
    if (gcv_host_register (data, size, &error)) {
      e->registered = TRUE;
      GST_DEBUG_OBJECT (owner, "host memory %p (%" G_GSIZE_FORMAT " bytes) "
          "page-locked: its frames are uploaded from where they lie", data,
          size);
    } else {
      e->refused = TRUE;
      GST_INFO_OBJECT (owner, "frames in host memory %p (%" G_GSIZE_FORMAT
          " bytes) are copied into staging: it could not be page-locked: %s",
          data, size, error->message);
      g_error_free (error);
    }
  }
  if (e->registered)
    e->busy++;
  else
    e = NULL;
  g_mutex_unlock (&lock);
  return e;
}

void
gst_gpu_convolve_hostreg_release (gpointer reg)
{
  Entry *e = reg;

  if (!e)
    return;
  g_mutex_lock (&lock);
  e->busy--;
  g_cond_broadcast (&idle);
  g_mutex_unlock (&lock);
}

void
gst_gpu_convolve_hostreg_forget (gpointer owner)
{
  g_mutex_lock (&lock);
  for (guint i = 0; i < MAX_ENTRIES; i++)
    if (entries[i].owner == owner && !entries[i].busy)
      drop (&entries[i]);
  g_mutex_unlock (&lock);
}
