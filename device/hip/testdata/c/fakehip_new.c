/* fakehip_new.c: the HIP test double as a newer runtime (HIP 7) than its
 * default driver supports, so that hipGetDeviceCount answers
 * hipErrorInsufficientDriver until fake_cuda_set_driver_version raises the
 * driver; it has only ROCm 6.2's names for pinned host memory
 * (hipExtHostAlloc, hipFreeHost), not hipHostMalloc and hipHostFree. */
#define FAKE_RUNTIME_VERSION 70051831 /* 7.0.51831 */
#define FAKE_NO_HOST_MALLOC 1
#include "fakehip.c"
