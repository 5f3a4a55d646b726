/* fakehip_nohost.c: the HIP test double without any pinned host allocator
 * (neither hipExtHostAlloc/hipFreeHost nor hipHostMalloc/hipHostFree). */
#define FAKE_NO_HOST_MALLOC 1
#define FAKE_NO_EXT_HOST_ALLOC 1
#include "fakehip.c"
