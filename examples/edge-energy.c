/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* edge-energy: per-frame edge statistics of a video, for archive analysis.
 *
 *   edge-energy [--backend=auto|cuda|cpu] [--path=auto|gpu|host]
 *               [--reduce=statistics|host] [--threshold=T] FILE-OR-URI
 *   edge-energy [--frames=N] [--width=W] [--height=H] [--pattern=NAME] ...
 *
 * Without a file it reads N frames of videotestsrc. For every frame it
 * prints one CSV line, frame,pts,energy,fraction:
 *   pts       presentation time in seconds (empty when the buffer has none)
 *   energy    mean over the frame of gx^2 + gy^2
 *   fraction  share of pixels where sqrt(gx^2 + gy^2) > threshold
 * with gx, gy the 3x3 Sobel derivatives of the grey image in 0..1 units.
 *
 * By default (--reduce=statistics) one gpuconvolve filter=sobel computes
 * the gradient magnitude and its per-frame statistics, and the numbers come
 * from the statistics meta: where the decoder gives CUDA memory (NVDEC) the
 * frames never leave the GPU. --reduce=host is the reference: two
 * derivative elements, both float images downloaded and reduced on the
 * CPU. edge-energy-analysis.c describes both, and the paths (--path).
 *
 * The path, the decoder, the backend and the algorithm that ran go to
 * stderr. Exit status 0 when done, 1 when the file or the pipeline failed
 * (a file that does not preroll within 30 s among them), 2 for bad
 * arguments.
 */
#include "edge-energy-analysis.h"

int
main (int argc, char **argv)
{
  gchar *backend = NULL, *pattern = NULL, *path = NULL, *reduce = NULL;
  EdgeEnergyOptions options;
  EdgeEnergyResult result;
  GOptionEntry entries[] = {
    {"backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
        "Where gpuconvolve filters: auto (default), cuda or cpu", "NAME"},
    {"path", 'p', 0, G_OPTION_ARG_STRING, &path,
          "How decoded video reaches gpuconvolve: auto (default: CUDA memory "
          "straight from an NVDEC decoder where there is one), gpu (that or "
          "an error) or host (videoconvert to GRAY8)", "NAME"},
    {"reduce", 'r', 0, G_OPTION_ARG_STRING, &reduce,
          "Where frames become numbers: statistics (default: gpuconvolve's "
          "per-frame statistics, no frame downloaded) or host (the "
          "reference: two float images reduced on the CPU)", "NAME"},
    {"threshold", 't', 0, G_OPTION_ARG_DOUBLE, &options.threshold,
          "Gradient magnitude above which an edge is strong (intensity "
          "0..1 units; default 0.5)", "T"},
    {"frames", 'n', 0, G_OPTION_ARG_INT, &options.frames,
        "Test source: number of frames (default 60)", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &options.width,
        "Test source: width (default 320)", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &options.height,
        "Test source: height (default 240)", "H"},
    {"pattern", 0, 0, G_OPTION_ARG_STRING, &pattern,
        "Test source: videotestsrc pattern (default ball)", "NAME"},
    {NULL}
  };
  GOptionContext *ctx;
  GError *error = NULL;
  EdgeEnergyStatus status;

  edge_energy_options_init (&options);
  ctx = g_option_context_new ("[FILE-OR-URI] - edge energy of each frame, "
      "as CSV");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("edge-energy: %s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (backend)
    options.backend = backend;
  if (pattern)
    options.pattern = pattern;
  if (path && !edge_energy_parse_path (path, &options.path)) {
    g_printerr ("edge-energy: --path must be auto, gpu or host\n");
    return 2;
  }
  if (reduce && !edge_energy_parse_reduce (reduce, &options.reduce)) {
    g_printerr ("edge-energy: --reduce must be statistics or host\n");
    return 2;
  }
  if (argc > 2) {
    g_printerr ("edge-energy: one file at most; see --help\n");
    return 2;
  }
  options.input = argc == 2 ? argv[1] : NULL;

  status = edge_energy_run (&options, stdout, &result);
  edge_energy_result_clear (&result);
  g_free (backend);
  g_free (pattern);
  g_free (path);
  g_free (reduce);
  return status;
}
