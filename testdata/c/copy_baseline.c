/*
 * copy_baseline.c: the C side of the copy benchmarks on a GPU, for CUDA's
 * runtime API, its driver API and HIP. It moves n bytes between host
 * memory and device memory, one copy at a time, each waited for, as plain
 * C code would. The host memory is pageable (malloc, as Go's heap is) or
 * pinned: page-locked by the library (cudaMallocHost and cudaFreeHost; the
 * driver API's cuMemAllocHost_v2 and cuMemFreeHost; HIP's hipExtHostAlloc
 * and hipFreeHost, or before ROCm 6.2 hipHostMalloc and hipHostFree, the
 * first of each pair the library has), as the Go side's pinned memory is.
 * The copies go through the runtime API (cudaMemcpyAsync or hipMemcpyAsync
 * on the default stream, then cudaStreamSynchronize or
 * hipStreamSynchronize: what cudaMemcpy does) or the driver API
 * (cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2, then cuStreamSynchronize,
 * in GPU 0's primary context).
 *
 * copy_baseline_reads is the C side of the small reads that importing a
 * device array of variable-length types makes (the last offsets read back
 * from the device, all on one stream with one synchronization), per batch
 * of a device stream: the stream waits for the producer's event on the
 * device, a copy a value lands in the library's pinned memory (a copy into
 * pageable memory would return only once done), one synchronization.
 *
 * HIP copies CUDA's runtime API call for call with the same arguments,
 * codes and flags, so the two share their code and differ in the prefix
 * of their names (cuda, hip), except for pinned host memory. It opens the
 * library the Go side loaded, by its name, so no CUDA or HIP header or
 * toolkit is needed. On the C test doubles it runs too, which is how the
 * suite checks it.
 */
#include "dl.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The APIs copy_baseline_open takes (its api argument). */
enum { API_CUDA_RUNTIME = 0, API_CUDA_DRIVER = 1, API_HIP = 2 };

/* The functions, as cuda_runtime_api.h, cuda.h and hip_runtime_api.h
 * declare them (a CUdeviceptr is pointer-sized, a CUdevice an int; a
 * stream or an event is a pointer). */
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
	int (*alloc_host)(void **, size_t); /* pinned host memory: CUDA */
	int (*alloc_host_flags)(void **, size_t, unsigned); /* HIP's, with flags */
	int (*free_host)(void *);
	int (*h2d)(uintptr_t, const void *, size_t, void *);
	int (*d2h)(void *, uintptr_t, size_t, void *);
	int (*copy)(void *, const void *, size_t, int, void *);
	int (*sync)(void *);
	int (*stream_wait)(void *, void *, unsigned);
	int (*stream_create)(void **, unsigned);
	int (*stream_destroy)(void *);
	int (*event_create)(void **, unsigned);
	int (*event_record)(void *, void *);
	int (*event_sync)(void *);
	int (*event_destroy)(void *);
};

/* Flags of the stream and the event: cudaStreamNonBlocking (the driver's
 * CU_STREAM_NON_BLOCKING, hipStreamNonBlocking) and cudaEventDisableTiming
 * (CU_EVENT_DISABLE_TIMING, hipEventDisableTiming), as the Go side's. */
#define STREAM_NON_BLOCKING 1u
#define EVENT_DISABLE_TIMING 2u

/* Steps copy_baseline_open and copy_baseline_reads report failing at
 * (their result is -step, or the library's error code). */
enum { E_OPEN = 1, E_SYMBOL, E_HOST, E_BUSY, E_SIZE, E_API, E_ARG, E_DATA };

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
	void *stream; /* copy_baseline_reads' stream */
	void *event;  /* recorded after the data reached the device */
} b;

/* One copy, not waited for, on stream (NULL: the default stream); the
 * runtime takes a kind (1 host to device, 2 device to host). */
static int copy_on(int to_device, unsigned char *host, size_t off, size_t n, void *stream)
{
	if (b.driver)
		return to_device ? b.a.h2d(b.dev + off, host, n, stream) : b.a.d2h(host, b.dev + off, n, stream);
	return to_device ? b.a.copy((void *)(b.dev + off), host, n, 1, stream)
			 : b.a.copy(host, (void *)(b.dev + off), n, 2, stream);
}

/* One copy of all n bytes on the default stream, not waited for. */
static int copy(int to_device, unsigned char *host) { return copy_on(to_device, host, 0, b.n, NULL); }

/* bind_first binds *field to the first of names (NULL-terminated) that the
 * library has; 0 where it has none. */
static int bind_first(void **field, const char *const *names)
{
	for (; *names; names++)
		if ((*field = dl_sym(b.h, *names)) != NULL)
			return 1;
	return 0;
}

/* bind_runtime binds the runtime API's functions, named prefix + name
 * (cudaMalloc, hipMalloc); 0 where the library lacks one. */
static int bind_runtime(const char *prefix)
{
	static const struct {
		size_t off;
		const char *name;
	} fns[] = {
		{offsetof(struct api, set_device), "SetDevice"},
		{offsetof(struct api, alloc), "Malloc"},
		{offsetof(struct api, free_runtime), "Free"},
		{offsetof(struct api, copy), "MemcpyAsync"},
		{offsetof(struct api, sync), "StreamSynchronize"},
		{offsetof(struct api, stream_wait), "StreamWaitEvent"},
		{offsetof(struct api, stream_create), "StreamCreateWithFlags"},
		{offsetof(struct api, stream_destroy), "StreamDestroy"},
		{offsetof(struct api, event_create), "EventCreateWithFlags"},
		{offsetof(struct api, event_record), "EventRecord"},
		{offsetof(struct api, event_sync), "EventSynchronize"},
		{offsetof(struct api, event_destroy), "EventDestroy"},
	};
	char name[64];
	size_t i;
	for (i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		snprintf(name, sizeof name, "%s%s", prefix, fns[i].name);
		if (!(*(void **)((char *)&b.a + fns[i].off) = dl_sym(b.h, name)))
			return 0;
	}
	return 1;
}

EXPORT int copy_baseline_close(void);

/* copy_baseline_open loads lib through api (API_CUDA_RUNTIME,
 * API_CUDA_DRIVER or API_HIP), makes GPU 0 current, allocates n bytes of
 * device memory and n of host memory (pinned by the library when pinned,
 * else malloc's), a stream and an event, checks that a round trip brings a
 * pattern back, and records the event on the stream. It returns 0, a
 * negative step that failed, or the library's error code. */
EXPORT int copy_baseline_open(const char *lib, int api, int pinned, size_t n)
{
	static const char *const hip_alloc_host[] = {"hipExtHostAlloc", "hipHostMalloc", NULL};
	static const char *const hip_free_host[] = {"hipFreeHost", "hipHostFree", NULL};
	unsigned char *check;
	int rc, ok;
	size_t k;

	if (b.h)
		return -E_BUSY;
	if (n == 0) /* no buffer: cudaMalloc answers NULL for 0 bytes, cuMemAlloc an error */
		return -E_SIZE;
	if (api != API_CUDA_RUNTIME && api != API_CUDA_DRIVER && api != API_HIP)
		return -E_API;
	memset(&b, 0, sizeof b);
	b.h = dl_open(lib);
	if (!b.h)
		return -E_OPEN;
	b.driver = api == API_CUDA_DRIVER;
	b.pinned = pinned;
	b.n = n;
#define BIND(field, name) (*(void **)&b.a.field = dl_sym(b.h, name))
	switch (api) {
	case API_CUDA_DRIVER:
		ok = BIND(init, "cuInit") && BIND(get, "cuDeviceGet") && BIND(retain, "cuDevicePrimaryCtxRetain") &&
		     BIND(set_context, "cuCtxSetCurrent") && BIND(release, "cuDevicePrimaryCtxRelease_v2") &&
		     BIND(alloc, "cuMemAlloc_v2") && BIND(free_driver, "cuMemFree_v2") &&
		     BIND(h2d, "cuMemcpyHtoDAsync_v2") && BIND(d2h, "cuMemcpyDtoHAsync_v2") &&
		     BIND(sync, "cuStreamSynchronize") && BIND(stream_wait, "cuStreamWaitEvent") && BIND(stream_create, "cuStreamCreate") &&
		     BIND(stream_destroy, "cuStreamDestroy_v2") && BIND(event_create, "cuEventCreate") &&
		     BIND(event_record, "cuEventRecord") && BIND(event_sync, "cuEventSynchronize") &&
		     BIND(event_destroy, "cuEventDestroy_v2") &&
		     (!pinned || (BIND(alloc_host, "cuMemAllocHost_v2") && BIND(free_host, "cuMemFreeHost")));
		break;
	case API_HIP:
		ok = bind_runtime("hip") &&
		     (!pinned || (bind_first((void **)&b.a.alloc_host_flags, hip_alloc_host) &&
				  bind_first((void **)&b.a.free_host, hip_free_host)));
		break;
	default:
		ok = bind_runtime("cuda") &&
		     (!pinned || (BIND(alloc_host, "cudaMallocHost") && BIND(free_host, "cudaFreeHost")));
	}
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
	if (b.driver) {
		if ((rc = b.a.init(0)) == 0 && (rc = b.a.get(&b.cudev, 0)) == 0 && (rc = b.a.retain(&b.ctx, b.cudev)) == 0)
			rc = b.a.set_context(b.ctx);
	} else {
		rc = b.a.set_device(0);
	}
	if (rc == 0) {
		if (pinned) {
			void *p = NULL;
			/* hipHostAllocDefault: flags 0 */
			rc = b.a.alloc_host_flags ? b.a.alloc_host_flags(&p, n, 0) : b.a.alloc_host(&p, n);
			if (rc == 0 && !p)
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
	if (rc == 0 && (rc = b.a.stream_create(&b.stream, STREAM_NON_BLOCKING)) == 0 &&
	    (rc = b.a.event_create(&b.event, EVENT_DISABLE_TIMING)) == 0 &&
	    (rc = b.a.event_record(b.event, b.stream)) == 0)
		rc = b.a.sync(b.stream);
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

/* copy_baseline_reads does iters times what a C consumer does per batch
 * of a device stream whose arrays have variable-length types: its stream
 * waits on the device for the batch's event (one recorded once, as a
 * producer that sends one batch again and again has), reads values of
 * width bytes (1 to 8) from as many places in the device memory into
 * host memory (the library's pinned memory, where the baseline was opened
 * pinned, else malloc's), and synchronizes the stream once. The values
 * read last are checked. It returns 0, a negative step that failed, or
 * the library's error code. */
EXPORT int copy_baseline_reads(int reads, int width, int iters)
{
	unsigned char *got = NULL;
	void *p = NULL;
	size_t stride, k;
	int rc = 0, i, r;

	if (reads < 1 || width < 1 || width > 8 || iters < 0 || (size_t)reads * 8 > b.n)
		return -E_ARG;
	if (b.pinned)
		rc = b.a.alloc_host_flags ? b.a.alloc_host_flags(&p, (size_t)reads * 8, 0) : b.a.alloc_host(&p, (size_t)reads * 8);
	else
		p = malloc((size_t)reads * 8);
	if (rc != 0 || !(got = p))
		return rc ? rc : -E_HOST;
	stride = b.n / (size_t)reads / 8 * 8;
	for (i = 0; i < iters && rc == 0; i++) {
		if ((rc = b.a.stream_wait(b.stream, b.event, 0)) != 0)
			break;
		for (r = 0; r < reads && rc == 0; r++)
			rc = copy_on(0, got + 8 * r, stride * r, (size_t)width, b.stream);
		if (rc == 0)
			rc = b.a.sync(b.stream);
	}
	for (r = 0; rc == 0 && iters > 0 && r < reads; r++)
		for (k = 0; k < (size_t)width; k++)
			if (got[8 * r + k] != (unsigned char)(((stride * r + k) % 256) * 7 + 1))
				rc = -E_DATA;
	if (b.pinned)
		b.a.free_host(got);
	else
		free(got);
	return rc;
}

/* copy_baseline_close gives back everything copy_baseline_open took, each
 * allocation with its own kind's call (the memory while the context is
 * still current), and returns 0 or the library's first error code. */
EXPORT int copy_baseline_close(void)
{
	int rc = 0, r;
	if (b.event) {
		r = b.a.event_destroy(b.event);
		rc = rc ? rc : r;
	}
	if (b.stream) {
		r = b.a.stream_destroy(b.stream);
		rc = rc ? rc : r;
	}
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
