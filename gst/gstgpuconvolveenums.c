/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GEnum types of gpuconvolve's properties. The values are the engine's, so
 * the element passes them through unchanged. */
#include "gstgpuconvolveenums.h"
#include "gcv.h"

#define DEFINE_ENUM(func, name, ...)                                    \
GType                                                                   \
func (void)                                                             \
{                                                                       \
  static GType type = 0;                                                \
  static const GEnumValue values[] = { __VA_ARGS__, {0, NULL, NULL} };  \
  if (g_once_init_enter (&type)) {                                      \
    GType t = g_enum_register_static (name, values);                    \
    g_once_init_leave (&type, t);                                       \
  }                                                                     \
  return type;                                                          \
}

DEFINE_ENUM (gst_gpu_convolve_filter_get_type, "GstGpuConvolveFilter",
    {GCV_BUILTIN_CUSTOM, "The kernel properties", "custom"},
    {GCV_BUILTIN_BOX, "Box (mean) of size x size", "box"},
    {GCV_BUILTIN_GAUSSIAN, "Gaussian of size x size and sigma", "gaussian"},
    {GCV_BUILTIN_SHARPEN, "Unsharp mask: 2*identity - gaussian", "sharpen"},
    {GCV_BUILTIN_LAPLACIAN, "Laplacian (size >= 3)", "laplacian"},
    {GCV_BUILTIN_SOBEL_X, "Sobel derivative in x (size >= 3)", "sobel-x"},
    {GCV_BUILTIN_SOBEL_Y, "Sobel derivative in y (size >= 3)", "sobel-y"},
    {GCV_BUILTIN_SCHARR_X, "Scharr derivative in x (3x3)", "scharr-x"},
    {GCV_BUILTIN_SCHARR_Y, "Scharr derivative in y (3x3)", "scharr-y"},
    {GCV_BUILTIN_EMBOSS, "Emboss, light from the top left", "emboss"},
    {GCV_BUILTIN_LOG, "Laplacian of Gaussian, zero sum", "log"},
    {GCV_BUILTIN_DOG, "Difference of Gaussians sigma and 1.6 sigma", "dog"},
    {GCV_BUILTIN_SOBEL, "Gradient magnitude of sobel-x and sobel-y "
          "(size >= 3)", "sobel"},
    {GCV_BUILTIN_SCHARR, "Gradient magnitude of scharr-x and scharr-y (3x3)",
        "scharr"});

DEFINE_ENUM (gst_gpu_convolve_mode_get_type, "GstGpuConvolveMode",
    {GCV_MODE_CORRELATION, "Correlation, as OpenCV filter2D", "correlation"},
    {GCV_MODE_CONVOLUTION, "Convolution: the kernel flipped in both axes",
        "convolution"});

/* OpenCV names, with scipy.ndimage names as aliases */
DEFINE_ENUM (gst_gpu_convolve_border_get_type, "GstGpuConvolveBorder",
    {GCV_BORDER_CONSTANT, "border-value outside: v v v | a b c d", "constant"},
    {GCV_BORDER_REPLICATE, "Edge repeated: a a a | a b c d", "replicate"},
    {GCV_BORDER_REPLICATE, "Alias of replicate (scipy)", "nearest"},
    {GCV_BORDER_REFLECT, "Mirrored with the edge: c b a | a b c d",
        "reflect"},
    {GCV_BORDER_REFLECT101, "Mirrored about the edge: d c b | a b c d",
        "reflect101"},
    {GCV_BORDER_REFLECT101, "Alias of reflect101 (scipy)", "mirror"},
    {GCV_BORDER_WRAP, "Periodic: b c d | a b c d", "wrap"});

DEFINE_ENUM (gst_gpu_convolve_alpha_get_type, "GstGpuConvolveAlpha",
    {GCV_ALPHA_PASSTHROUGH, "Copy alpha (and x) unchanged", "passthrough"},
    {GCV_ALPHA_FILTER, "Filter alpha like a colour channel", "filter"});
DEFINE_ENUM (gst_gpu_convolve_planes_get_type, "GstGpuConvolvePlanes",
    {GCV_PLANES_LUMA, "Filter Y, copy the chroma planes", "luma"},
    {GCV_PLANES_ALL, "Filter Y, U and V, each at its own size", "all"});

DEFINE_ENUM (gst_gpu_convolve_separable_get_type, "GstGpuConvolveSeparable",
    {GCV_SEPARABLE_AUTO, "Separable path when the kernel is rank 1", "auto"},
    {GCV_SEPARABLE_ALWAYS, "Require a separable kernel", "always"},
    {GCV_SEPARABLE_NEVER, "Always use a 2D path", "never"});

DEFINE_ENUM (gst_gpu_convolve_algorithm_get_type, "GstGpuConvolveAlgorithm",
    {GCV_FAMILY_AUTO, "Chosen by the dispatcher", "auto"},
    {GCV_FAMILY_DIRECT, "Plain direct 2D", "direct"},
    {GCV_FAMILY_TILED, "Shared-memory tiled 2D (CUDA)", "tiled"},
    {GCV_FAMILY_REGISTER, "Register cache with warp shuffle (CUDA)",
        "register"},
    {GCV_FAMILY_SEPARABLE, "Row and column passes (rank-1 kernels)",
        "separable"},
    {GCV_FAMILY_FFT, "cuFFT with the border padded in (CUDA)", "fft"});

DEFINE_ENUM (gst_gpu_convolve_backend_get_type, "GstGpuConvolveBackend",
    {GCV_BACKEND_AUTO, "CUDA when a device is usable, else CPU", "auto"},
    {GCV_BACKEND_CUDA, "CUDA only", "cuda"},
    {GCV_BACKEND_CPU, "CPU only", "cpu"});

DEFINE_ENUM (gst_gpu_convolve_region_mode_get_type, "GstGpuConvolveRegionMode",
    {GCV_REGIONS_ALL, "The whole frame; regions are ignored", "all"},
    {GCV_REGIONS_INSIDE, "Only inside the regions (redaction)", "inside"},
    {GCV_REGIONS_OUTSIDE, "All but the regions", "outside"});

DEFINE_ENUM (gst_gpu_convolve_region_source_get_type,
    "GstGpuConvolveRegionSource",
    {GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY, "The regions property",
        "property"},
    {GST_GPU_CONVOLVE_REGION_SOURCE_ROI_META, "The buffer's metas (of "
          "region-type, when set)", "roi-meta"},
    {GST_GPU_CONVOLVE_REGION_SOURCE_BOTH, "The property and the metas",
        "both"});

DEFINE_ENUM (gst_gpu_convolve_region_fail_get_type,
    "GstGpuConvolveRegionFail",
    {GST_GPU_CONVOLVE_REGION_FAIL_CLOSED, "Filter the whole frame, with a "
          "warning", "closed"},
    {GST_GPU_CONVOLVE_REGION_FAIL_ERROR, "Stop with an error", "error"},
    {GST_GPU_CONVOLVE_REGION_FAIL_OPEN, "Filter what the regions allow, "
          "with a warning", "open"});

DEFINE_ENUM (gst_gpu_convolve_host_register_get_type,
    "GstGpuConvolveHostRegister",
    {GST_GPU_CONVOLVE_HOST_REGISTER_NONE, "None: every frame is copied into "
          "staging", "none"},
    {GST_GPU_CONVOLVE_HOST_REGISTER_REUSED, "Memory that comes again in "
          "buffers of the same GstMemory (a buffer pool's), for its life",
        "reused"},
    {GST_GPU_CONVOLVE_HOST_REGISTER_KEPT, "Also memory wrapped anew for each "
          "buffer, which upstream keeps allocated until the element stops",
        "kept"});
