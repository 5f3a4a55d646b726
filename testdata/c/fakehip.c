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
#define cudaMemcpyBatchAsync hipMemcpyBatchAsync /* ROCm 7, with CUDA 12.8's failIdx */
#define FAKE_BATCH_FAILIDX 1
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

/* hipDeviceAttribute_t numbers, not CUDA's: include/hip/hip_runtime_api.h
 * of ROCm/HIP, the same in rocm-6.1.2 and rocm-6.2.0 (an enum counted from
 * hipDeviceAttributeCudaCompatibleBegin = 0). */
#define FAKE_ATTR_CC_MAJOR 23           /* hipDeviceAttributeComputeCapabilityMajor */
#define FAKE_ATTR_CC_MINOR 61           /* hipDeviceAttributeComputeCapabilityMinor */
#define FAKE_ATTR_CONCURRENT_MANAGED 9  /* hipDeviceAttributeConcurrentManagedAccess */

/* sizeof(hipDeviceProp_tR0600), what hipGetDevicePropertiesR0600 writes;
 * the HIP 5 hipGetDeviceProperties (fakehip_old.c) writes as much. */
#define FAKE_PROP_SIZE 1472

/* hipHostMalloc(void **p, size_t size, unsigned flags) */
#define FAKE_HOST_MALLOC_FLAGS , unsigned flags

/* major*10000000 + minor*100000 + patch; fakehip_new.c sets a newer runtime */
#ifndef FAKE_RUNTIME_VERSION
#define FAKE_RUNTIME_VERSION 60140092 /* 6.1.40092 */
#endif
#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION 60241133 /* 6.2.41133 */
#endif

/* chipStar 1.2.1 answers hipEventQuery on an event never recorded with
 * hipErrorNotReady, where HIP's header says hipSuccess: the double takes
 * the answer that makes a poll never end, so a host wait that trusts the
 * header is caught (fake_cuda_set_unrecorded_not_ready(0) gives the other). */
#define FAKE_UNRECORDED_NOT_READY 1

/* hipStreamPerThread (2) is in every HIP 6; hipStreamLegacy (1) came with
 * HIP 6.2 (hip_runtime_api.h of rocm-6.2.0, not of rocm-6.1.2), so an older
 * runtime refuses handle 1 as an invalid handle. */
#ifndef FAKE_STREAM_LEGACY
#if FAKE_RUNTIME_VERSION >= 60200000
#define FAKE_STREAM_LEGACY 1
#else
#define FAKE_STREAM_LEGACY 0
#endif
#endif

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
#endif

#if !defined(FAKE_CUDA_OLD) && (!defined(FAKE_NO_EXT_HOST_ALLOC) || defined(FAKE_FREE_HOST))
EXPORT cudaError_t hipFreeHost(void *p)
{
	ENTER_CTX(hipFreeHost);
	return unlock(release(p, 1));
}
#endif
