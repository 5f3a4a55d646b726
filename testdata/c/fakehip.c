/*
 * fakehip.c: the test double of the libamdhip64 subset that device/hip
 * binds: fakecudart.c compiled again with HIP's names. HIP copies the CUDA
 * runtime API call for call, with the same error codes, copy kinds and
 * flags, so only names (and the version encoding) change; the control
 * functions keep their fake_cuda_ prefix.
 */
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaSetDevice hipSetDevice
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetDeviceProperties_v2 hipGetDevicePropertiesR0600 /* HIP 6 */
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaMemGetInfo hipMemGetInfo
#define cudaMalloc hipMalloc
#define cudaMallocHost hipHostMalloc
#define cudaMallocManaged hipMallocManaged
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventDestroy hipEventDestroy
#define cudaEventQuery hipEventQuery

/* hipError_t (hip/hip_runtime_api.h): CUDA's numbers, some other names. */
#define cudaSuccess hipSuccess
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorInvalidMemcpyDirection hipErrorInvalidMemcpyDirection
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorInvalidDevice hipErrorInvalidDevice
#define cudaErrorInvalidResourceHandle hipErrorInvalidHandle
#define cudaErrorNotReady hipErrorNotReady

/* hipHostMalloc(void **p, size_t size, unsigned flags) */
#define FAKE_HOST_MALLOC_FLAGS , unsigned flags

/* major*10000000 + minor*100000 + patch; fakehip_new.c sets a newer runtime */
#ifndef FAKE_RUNTIME_VERSION
#define FAKE_RUNTIME_VERSION 60140092 /* 6.1.40092 */
#endif
#define FAKE_DRIVER_VERSION 60241133 /* 6.2.41133 */

#include "fakecudart.c"

/* ROCm 6.2's names for pinned host memory, which deprecate hipHostMalloc
 * and hipHostFree: the double exports both pairs, as ROCm 6.2 and later do,
 * except as HIP 5 (FAKE_CUDA_OLD) or built with FAKE_NO_EXT_HOST_ALLOC. */
#if !defined(FAKE_CUDA_OLD) && !defined(FAKE_NO_EXT_HOST_ALLOC)
EXPORT cudaError_t hipExtHostAlloc(void **p, size_t n, unsigned flags)
{
	ENTER_CTX(hipExtHostAlloc);
	(void)flags;
	return unlock(alloc(p, n, K_HOST));
}

EXPORT cudaError_t hipFreeHost(void *p)
{
	ENTER_CTX(hipFreeHost);
	if (!p)
		return unlock(cudaSuccess);
	return unlock(release(p, 1));
}
#endif
