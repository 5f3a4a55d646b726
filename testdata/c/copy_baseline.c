/*
 * copy_baseline.c: the C side of the copy benchmarks on a GPU. It moves n
 * bytes between host memory and device memory, one copy at a time, each
 * waited for, as plain C code would. The host memory is pageable (malloc,
 * as Go's heap is) or pinned: page-locked by the library (cudaMallocHost
 * and cudaFreeHost, or the driver API's cuMemAllocHost_v2 and
 * cuMemFreeHost), as the Go side's pinned memory is. The copies go through
 * the CUDA runtime (cudaMemcpyAsync on the legacy default stream, then
 * cudaStreamSynchronize: what cudaMemcpy does) or the driver API
 * (cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2, then cuStreamSynchronize,
 * in GPU 0's primary context). It opens the library the Go side loaded,
 * by its name, so no CUDA header or toolkit is needed. On the C test
 * doubles it runs too, which is how the suite checks it.
 */
#include "dl.h"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The functions, as cuda_runtime_api.h and cuda.h declare them (a
 * CUdeviceptr is pointer-sized, a CUdevice an int). */
struct api {
	int (*init)(unsigned);
	int (*get)(int *, int);
	int (*retain)(void **, int);
	int (*set_context)(void *);
	int (*set_device)(int);
	int (*release)(int);
	int (*alloc)(void *, size_t);
	int (*free_driver)(uintptr_t);
	int (*free_runtime)(void *);
	int (*alloc_host)(void **, size_t); /* pinned host memory */
	int (*free_host)(void *);
	int (*h2d)(uintptr_t, const void *, size_t, void *);
	int (*d2h)(void *, uintptr_t, size_t, void *);
	int (*copy)(void *, const void *, size_t, int, void *);
	int (*sync)(void *);
};

/* Steps copy_baseline_open reports failing at (its result is -step, or
 * the library's error code). */
enum { E_OPEN = 1, E_SYMBOL, E_HOST, E_BUSY, E_SIZE };

/* One baseline at a time: what copy_baseline_open set up. */
static struct {
	void *h;
	struct api a;
	int driver;
	int pinned; /* host is the library's pinned memory, else malloc's */
	size_t n;
	unsigned char *host;
	uintptr_t dev;
	int cudev; /* the driver API's CUdevice of GPU 0 */
	void *ctx;
} b;

/* One copy, not waited for; the runtime takes a kind (1 host to device,
 * 2 device to host). */
static int copy(int to_device, unsigned char *host)
{
	if (b.driver)
		return to_device ? b.a.h2d(b.dev, host, b.n, NULL) : b.a.d2h(host, b.dev, b.n, NULL);
	return to_device ? b.a.copy((void *)b.dev, host, b.n, 1, NULL) : b.a.copy(host, (void *)b.dev, b.n, 2, NULL);
}

EXPORT int copy_baseline_close(void);

/* copy_baseline_open loads lib (through the driver API when driver), makes
 * GPU 0 current, allocates n bytes of device memory and n of host memory
 * (pinned by the library when pinned, else malloc's), and checks that a
 * round trip brings a pattern back. It returns 0, a negative step that
 * failed, or the library's error code. */
EXPORT int copy_baseline_open(const char *lib, int driver, int pinned, size_t n)
{
	unsigned char *check;
	int rc, ok;
	size_t k;

	if (b.h)
		return -E_BUSY;
	if (n == 0) /* no buffer: cudaMalloc answers NULL for 0 bytes, cuMemAlloc an error */
		return -E_SIZE;
	memset(&b, 0, sizeof b);
	b.h = dl_open(lib);
	if (!b.h)
		return -E_OPEN;
	b.driver = driver;
	b.pinned = pinned;
	b.n = n;
#define BIND(field, name) (*(void **)&b.a.field = dl_sym(b.h, name))
	if (driver)
		ok = BIND(init, "cuInit") && BIND(get, "cuDeviceGet") && BIND(retain, "cuDevicePrimaryCtxRetain") &&
		     BIND(set_context, "cuCtxSetCurrent") && BIND(release, "cuDevicePrimaryCtxRelease_v2") &&
		     BIND(alloc, "cuMemAlloc_v2") && BIND(free_driver, "cuMemFree_v2") &&
		     BIND(h2d, "cuMemcpyHtoDAsync_v2") && BIND(d2h, "cuMemcpyDtoHAsync_v2") &&
		     BIND(sync, "cuStreamSynchronize") &&
		     (!pinned || (BIND(alloc_host, "cuMemAllocHost_v2") && BIND(free_host, "cuMemFreeHost")));
	else
		ok = BIND(set_device, "cudaSetDevice") && BIND(alloc, "cudaMalloc") && BIND(free_runtime, "cudaFree") &&
		     BIND(copy, "cudaMemcpyAsync") && BIND(sync, "cudaStreamSynchronize") &&
		     (!pinned || (BIND(alloc_host, "cudaMallocHost") && BIND(free_host, "cudaFreeHost")));
#undef BIND
	if (!ok) {
		copy_baseline_close();
		return -E_SYMBOL;
	}
	check = malloc(n);
	if (!check) {
		copy_baseline_close();
		return -E_HOST;
	}
	/* The context first: pinned memory is allocated in it. */
	if (driver) {
		if ((rc = b.a.init(0)) == 0 && (rc = b.a.get(&b.cudev, 0)) == 0 && (rc = b.a.retain(&b.ctx, b.cudev)) == 0)
			rc = b.a.set_context(b.ctx);
	} else {
		rc = b.a.set_device(0);
	}
	if (rc == 0) {
		if (pinned) {
			void *p = NULL;
			if ((rc = b.a.alloc_host(&p, n)) == 0 && !p)
				rc = -E_HOST;
			b.host = p;
		} else if (!(b.host = malloc(n))) {
			rc = -E_HOST;
		}
	}
	if (rc == 0) { /* the pattern repeats every 256 bytes: copy it on */
		for (k = 0; k < n && k < 256; k++)
			b.host[k] = (unsigned char)(k * 7 + 1);
		for (k = 256; k < n; k *= 2)
			memcpy(b.host + k, b.host, n - k < k ? n - k : k);
	}
	if (rc == 0 && (rc = b.a.alloc(&b.dev, n)) == 0 && (rc = copy(1, b.host)) == 0 && (rc = copy(0, check)) == 0)
		rc = b.a.sync(NULL);
	if (rc == 0 && memcmp(b.host, check, n) != 0)
		rc = -E_HOST;
	free(check);
	if (rc != 0)
		copy_baseline_close();
	return rc;
}

/* copy_baseline_run copies iters times (to the device when to_device, else
 * back), each waited for, on the thread that called copy_baseline_open
 * (whose current device or context it set). It returns 0 or the library's
 * error code. */
EXPORT int copy_baseline_run(int to_device, int iters)
{
	int rc = 0, i;
	for (i = 0; i < iters && rc == 0; i++)
		if ((rc = copy(to_device, b.host)) == 0)
			rc = b.a.sync(NULL);
	return rc;
}

/* copy_baseline_close gives back everything copy_baseline_open took, each
 * allocation with its own kind's call (the memory while the context is
 * still current), and returns 0 or the library's first error code. */
EXPORT int copy_baseline_close(void)
{
	int rc = 0, r;
	if (b.dev) {
		r = b.driver ? b.a.free_driver(b.dev) : b.a.free_runtime((void *)b.dev);
		rc = rc ? rc : r;
	}
	if (b.host) {
		if (b.pinned) {
			r = b.a.free_host(b.host);
			rc = rc ? rc : r;
		} else {
			free(b.host);
		}
	}
	if (b.ctx) {
		r = b.a.release(b.cudev);
		rc = rc ? rc : r;
	}
	if (b.h)
		dl_close(b.h);
	memset(&b, 0, sizeof b);
	return rc;
}
