/* fakehip_old.c: the HIP test double as an old runtime (HIP 5) that lacks
 * hipGetDevicePropertiesR0600 (and hipMallocManaged). */
#define FAKE_CUDA_OLD 1
#include "fakehip.c"
