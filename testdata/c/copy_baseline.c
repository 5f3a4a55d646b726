/*
 * copy_baseline.c: the C side of the copy benchmarks on a GPU. It moves n
 * bytes between pageable host memory (malloc, as Go's heap is) and device
 * memory, one copy at a time, each waited for, as plain C code would:
 * through the CUDA runtime (cudaMemcpyAsync on the legacy default stream,
 * then cudaStreamSynchronize: what cudaMemcpy does) or the driver API
 * (cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2, then cuStreamSynchronize,
 * in GPU 0's primary context). It opens the library the Go side loaded,
 * by its name, so no CUDA header or toolkit is needed. On the C test
 * doubles it runs too, which is how the suite checks it.
 */
#include <dlfcn.h>
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
	int (*h2d)(uintptr_t, const void *, size_t, void *);
	int (*d2h)(void *, uintptr_t, size_t, void *);
	int (*copy)(void *, const void *, size_t, int, void *);
	int (*sync)(void *);
};

/* Steps copy_baseline_open reports failing at (its result is -step, or
 * the library's error code). */
enum { E_OPEN = 1, E_SYMBOL, E_HOST, E_BUSY };

/* One baseline at a time: what copy_baseline_open set up. */
static struct {
	void *h;
	struct api a;
	int driver;
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

EXPORT void copy_baseline_close(void);

/* copy_baseline_open loads lib (through the driver API when driver), makes
 * GPU 0 current, allocates n bytes of device memory and n of host memory,
 * and checks that a round trip brings a pattern back. It returns 0, a
 * negative step that failed, or the library's error code. */
EXPORT int copy_baseline_open(const char *lib, int driver, size_t n)
{
	unsigned char *check;
	int rc, ok;
	size_t k;

	if (b.h)
		return -E_BUSY;
	memset(&b, 0, sizeof b);
	b.h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!b.h)
		return -E_OPEN;
	b.driver = driver;
	b.n = n;
#define BIND(field, name) (*(void **)&b.a.field = dlsym(b.h, name))
	if (driver)
		ok = BIND(init, "cuInit") && BIND(get, "cuDeviceGet") && BIND(retain, "cuDevicePrimaryCtxRetain") &&
		     BIND(set_context, "cuCtxSetCurrent") && BIND(release, "cuDevicePrimaryCtxRelease_v2") &&
		     BIND(alloc, "cuMemAlloc_v2") && BIND(free_driver, "cuMemFree_v2") &&
		     BIND(h2d, "cuMemcpyHtoDAsync_v2") && BIND(d2h, "cuMemcpyDtoHAsync_v2") &&
		     BIND(sync, "cuStreamSynchronize");
	else
		ok = BIND(set_device, "cudaSetDevice") && BIND(alloc, "cudaMalloc") && BIND(free_runtime, "cudaFree") &&
		     BIND(copy, "cudaMemcpyAsync") && BIND(sync, "cudaStreamSynchronize");
#undef BIND
	if (!ok) {
		copy_baseline_close();
		return -E_SYMBOL;
	}
	b.host = malloc(n);
	check = malloc(n);
	if (!b.host || !check) {
		free(check);
		copy_baseline_close();
		return -E_HOST;
	}
	for (k = 0; k < n; k++)
		b.host[k] = (unsigned char)(k * 7 + 1);
	if (driver) {
		if ((rc = b.a.init(0)) == 0 && (rc = b.a.get(&b.cudev, 0)) == 0 && (rc = b.a.retain(&b.ctx, b.cudev)) == 0)
			rc = b.a.set_context(b.ctx);
	} else {
		rc = b.a.set_device(0);
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

/* copy_baseline_close gives back everything copy_baseline_open took. */
EXPORT void copy_baseline_close(void)
{
	if (b.dev) {
		if (b.driver)
			b.a.free_driver(b.dev);
		else
			b.a.free_runtime((void *)b.dev);
	}
	if (b.ctx)
		b.a.release(b.cudev);
	free(b.host);
	if (b.h)
		dlclose(b.h);
	memset(&b, 0, sizeof b);
}
