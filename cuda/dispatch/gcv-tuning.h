/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tuning tables: the dispatcher's measured choices for one GPU, as written
 * by gpuconvolve-tune. The format is documented in docs/tuning.md:
 *
 *   # comment
 *   gpu: NVIDIA H100 80GB HBM3
 *   arch: sm_90
 *   # format  kw  kh  sep  size       ms        variant
 *   GRAY32F   9   9   0    4096x4096  0.1234    tiled ty=2
 */
#ifndef GCV_TUNING_H
#define GCV_TUNING_H

#include "gcv-variant.h"

G_BEGIN_DECLS

typedef struct _GcvTuningTable GcvTuningTable;

typedef struct {
  GcvDispatchKey key;
  gdouble ms;
  GcvVariant variant;
} GcvTuningRow;

struct _GcvTuningTable {
  gchar *gpu;                   /* the device it was measured on */
  gchar *arch;                  /* "sm_90" */
  const gchar *source;          /* where gcv_tuning_find() found it:
                                 * "tuning-file", "cache" or "shipped";
                                 * NULL for a table made or loaded
                                 * otherwise */
  GArray *rows;                 /* GcvTuningRow */
};

GcvTuningTable *gcv_tuning_table_new (const gchar * gpu, const gchar * arch);
GcvTuningTable *gcv_tuning_table_parse (const gchar * text, gsize len,
    const gchar * where, GError ** error);
GcvTuningTable *gcv_tuning_table_load (const gchar * path, GError ** error);
gchar *gcv_tuning_table_to_string (const GcvTuningTable * table);
gboolean gcv_tuning_table_save (const GcvTuningTable * table,
    const gchar * path, GError ** error);
void gcv_tuning_table_free (GcvTuningTable * table);

/* The row nearest to `key`: same format and separable flag, then the
 * closest kernel size and frame size on log scales. NULL when no row has
 * that format and flag. */
const GcvTuningRow *gcv_tuning_table_lookup (const GcvTuningTable * table,
    const GcvDispatchKey * key);

/* A file name for a GPU: "nvidia-h100-80gb-hbm3.tbl". */
gchar *gcv_tuning_file_name (const gchar * gpu);
/* The table for this GPU: `tuning_file` when given, else the user cache
 * table, else a shipped one (GPUCONVOLVE_TUNING_PATH, then the install
 * directory). `source` says which ("tuning-file", "cache", "shipped").
 * NULL with no error when none exists; NULL with an error when
 * `tuning_file` cannot be used. */
GcvTuningTable *gcv_tuning_find (const gchar * tuning_file, const gchar * gpu,
    const gchar ** source, GError ** error);

G_END_DECLS

#endif /* GCV_TUNING_H */
