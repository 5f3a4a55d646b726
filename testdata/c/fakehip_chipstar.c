/*
 * fakehip_chipstar.c: the HIP test double as chipStar 1.2.1, a HIP on
 * OpenCL (../shared/runtimes/chipstar), where it differs from AMD's
 * runtime: versions of its own (runtime 10100000, driver 4); only
 * hipGetDevicePropertiesR0600; hipHostMalloc and hipFreeHost but no
 * hipExtHostAlloc; no legacy default-stream handle; hipEventQuery on an
 * event never recorded answers hipErrorNotReady (as every HIP double does);
 * and hipGetBackendNativeHandles, which names the OpenCL objects behind a
 * stream, with the clGetDeviceInfo that chipStar's libOpenCL dependency
 * brings. The OpenCL device is a CPU (CL_DEVICE_TYPE_CPU), as PoCL's is,
 * unless fake_chipstar_set_device sets another type or backend name.
 */
#define FAKE_RUNTIME_VERSION 10100000
#define FAKE_DRIVER_VERSION 4
#define FAKE_NO_DRIVER_CHECK 1
#define FAKE_ONLY_VERSIONED_PROPS 1
#define FAKE_NO_EXT_HOST_ALLOC 1
#define FAKE_FREE_HOST 1
#define FAKE_STREAM_LEGACY 0
#define FAKE_NO_BATCH 1 /* chipStar has no hipMemcpyBatchAsync */
#include "fakehip.c"

#include <string.h>

static unsigned long chip_cl_type = 2; /* CL_DEVICE_TYPE_CPU */
static const char *chip_backend = "opencl";
/* The OpenCL handles: any distinct addresses; the device one is what
 * clGetDeviceInfo knows. */
static char chip_platform, chip_device, chip_context, chip_queue;

/* fake_chipstar_set_device(type, level0): the OpenCL device type the
 * OpenCL device answers (CL_DEVICE_TYPE_GPU is 4); level0 names the Level
 * Zero backend instead, whose handles are not OpenCL's. */
EXPORT void fake_chipstar_set_device(unsigned long type, int level0)
{
	pthread_mutex_lock(&mu);
	chip_cl_type = type;
	chip_backend = level0 ? "level0" : "opencl";
	pthread_mutex_unlock(&mu);
}

/* Asked with handles NULL it writes how many there are; with count NULL it
 * fills them: the backend's name, then platform, device, context, queue
 * (chipStar also switches the stream's queue to profiling). Both or
 * neither: hipErrorInvalidValue. */
EXPORT int hipGetBackendNativeHandles(uintptr_t stream, uintptr_t *handles, int *count)
{
	ENTER_CTX(hipGetBackendNativeHandles);
	if ((handles == NULL) == (count == NULL))
		return unlock(hipErrorInvalidValue);
	if (stream && !live_stream((cudaStream_t)stream))
		return unlock(hipErrorInvalidHandle);
	if (count) {
		*count = 5;
		return unlock(hipSuccess);
	}
	handles[0] = (uintptr_t)chip_backend;
	handles[1] = (uintptr_t)&chip_platform;
	handles[2] = (uintptr_t)&chip_device;
	handles[3] = (uintptr_t)&chip_context;
	handles[4] = (uintptr_t)&chip_queue;
	return unlock(hipSuccess);
}

/* clGetDeviceInfo(device, CL_DEVICE_TYPE 0x1000, size, value, size_ret):
 * only that question, only of the device above; CL_INVALID_DEVICE (-33),
 * CL_INVALID_VALUE (-30) otherwise. */
EXPORT int clGetDeviceInfo(void *device, unsigned param, size_t size, void *value, size_t *size_ret)
{
	unsigned long t;
	if (device != &chip_device)
		return -33;
	if (param != 0x1000 || (value && size < sizeof t))
		return -30;
	pthread_mutex_lock(&mu);
	t = chip_cl_type;
	pthread_mutex_unlock(&mu);
	if (value)
		memcpy(value, &t, sizeof t);
	if (size_ret)
		*size_ret = sizeof t;
	return 0;
}
