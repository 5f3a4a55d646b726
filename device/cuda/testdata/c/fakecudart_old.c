/* fakecudart_old.c: the CUDA test double as an old runtime that lacks
 * cudaMallocManaged and cudaGetDeviceProperties_v2. */
#define FAKE_CUDA_OLD 1
#include "fakecudart.c"
