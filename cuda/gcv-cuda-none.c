/* Builds without CUDA have no CUDA backend. */
#include "gcv-private.h"

const GcvBackend *
gcv_cuda_backend_get (void)
{
  return NULL;
}
