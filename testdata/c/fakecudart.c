/*
 * fakecudart.c: a test double of the libcudart subset that device/cuda
 * binds, on host memory (malloc), for machines without an NVIDIA GPU.
 *
 * It keeps real bookkeeping so that the Go bindings are proven, not just
 * called: an allocation table (kind, size, owning device), the current
 * device per thread, streams as queues whose asynchronous copies run only
 * when something synchronizes (so reading before a sync sees stale data;
 * a copy from device to pageable host memory alone completes before it
 * returns, as CUDA documents),
 * events that record a stream position, and fault injection.
 *
 * Where CUDA would accept it, the double is stricter on purpose: work on a
 * stream, allocation or event of another device than the calling thread's
 * current one fails, which proves that the caller makes the right device
 * current on the thread that makes the call.
 *
 * Every runtime entry point is a thin wrapper: ENTER or ENTER_CTX, then a
 * static core that runs with mu held. fakecuda.c adds the driver API
 * (libcuda) over the same cores and state, so a CUstream is a cudaStream_t
 * and a CUevent a cudaEvent_t; built with FAKE_NO_RUNTIME_API it exports
 * no runtime entry point (RT_EXPORT), and fakecuda_mixed.c exports both.
 * The control functions (fake_cuda_*) are exported by every build.
 *
 * Compiled with FAKE_CUDA_OLD defined (fakecudart_old.c) it leaves out
 * cudaMallocManaged, cudaGetDeviceProperties_v2 and cudaMemcpyBatchAsync,
 * like an old runtime; FAKE_NO_BATCH leaves out the batched copy alone.
 *
 * It counts what costs time on a GPU (fake_cuda_costs): round trips to the
 * device (a synchronization that had to wait for queued work, a copy into
 * pageable memory, which returns only once done), copies into pageable
 * memory, streams and events made and destroyed, device switches
 * (cudaSetDevice, the driver's context calls) and calls. With
 * fake_cuda_set_latency each call and each round trip also takes the time
 * it would on a GPU (the calling thread spins, outside the lock), so that
 * a benchmark on the double shows what only a GPU would otherwise show.
 *
 * fakehip.c compiles it again with every CUDA name #defined to its HIP
 * name (hipMalloc for cudaMalloc, hipErrorOutOfMemory for
 * cudaErrorMemoryAllocation), the double of libamdhip64: the names it
 * exports, counts, fails and reports all go through those macros (NAME).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* RT_EXPORT marks the runtime entry points: fakecuda.c, the driver-only
 * double, keeps them as unexported statics, as libcuda has no cuda*. */
#ifdef FAKE_NO_RUNTIME_API
#define RT_EXPORT static __attribute__((unused))
#else
#define RT_EXPORT EXPORT
#endif

typedef int cudaError_t;
typedef struct fstream *cudaStream_t;
typedef struct fevent *cudaEvent_t;

/* Values from CUDA's driver_types.h. */
enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorInsufficientDriver = 35,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorNotReady = 600,
};

enum { HostToHost = 0, HostToDevice = 1, DeviceToHost = 2, DeviceToDevice = 3, Default = 4 };

#ifndef FAKE_RUNTIME_VERSION /* fakehip.c has HIP's encoding */
#define FAKE_RUNTIME_VERSION 12080 /* 1000*major + 10*minor */
#define FAKE_DRIVER_VERSION 12090
#endif
#define FAKE_CC_MAJOR 9
#define FAKE_CC_MINOR 0
/* The properties call writes exactly the real struct's size:
 * sizeof(cudaDeviceProp) in CUDA 12 (fakehip.c: hipDeviceProp_tR0600), so
 * a caller's buffer that is too small is overrun as a real runtime would. */
#ifndef FAKE_PROP_SIZE
#define FAKE_PROP_SIZE 1032
#endif
#define PROP_NAME_LEN 256 /* name[256] is the first member */
#define PROP_FILL 0x6B    /* the rest: not zeros, so a short buffer shows */
/* Device attribute numbers: cudaDeviceAttr (driver_types.h), the same as
 * CUdevice_attribute; fakehip.c sets hipDeviceAttribute_t's. */
#ifndef FAKE_ATTR_CC_MAJOR
#define FAKE_ATTR_CC_MAJOR 75           /* cudaDevAttrComputeCapabilityMajor */
#define FAKE_ATTR_CC_MINOR 76           /* cudaDevAttrComputeCapabilityMinor */
#define FAKE_ATTR_CONCURRENT_MANAGED 89 /* cudaDevAttrConcurrentManagedAccess */
#endif
/* Stream handle 1 is cudaStreamLegacy (CUDA 7 on); HIP added hipStreamLegacy
 * only in 6.2, so fakehip.c sets 0 for an older runtime. */
#ifndef FAKE_STREAM_LEGACY
#define FAKE_STREAM_LEGACY 1
#endif
#define MAX_DEVICES 8
#define GARBAGE 0xA5 /* fresh device memory, so stale reads show */

enum { K_DEVICE = 1, K_HOST = 2, K_MANAGED = 3 };

struct alloc {
	unsigned char *p;
	size_t n;
	int kind, dev;
	struct alloc *next;
};

enum { OP_COPY = 1, OP_WAIT = 2 };

struct op {
	long seq;
	int type;
	void *dst;
	const void *src;
	size_t n;
	struct fstream *wait_s; /* OP_WAIT: run this stream up to wait_seq first */
	long wait_seq;
	struct op *next;
};

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u

struct fstream {
	uint32_t magic;
	int dev;
	unsigned flags;
	long enq, done; /* sequence numbers: ops queued, ops run */
	struct op *head, *tail;
	struct fstream *next;
};

struct fevent {
	uint32_t magic;
	int dev;
	unsigned flags;
	struct fstream *s; /* where it was recorded; NULL: never, or that work is done */
	long seq;
	int recorded;
	struct fevent *next;
};

/* pctx is a device's primary context, the only kind of context the double
 * has: retained through the driver API (retains), or made current by the
 * runtime (rt_active: the runtime keeps its own hold, not counted). */
struct pctx {
	int dev;
	long retains;
	int rt_active;
};

struct fault {
	char call[64];
	int code, after, armed;
};

struct counter {
	char call[64];
	long n;
};

/* What costs time on a GPU, counted since the reset (fake_cuda_costs). */
enum {
	COST_ROUND_TRIPS,
	COST_PAGEABLE_COPIES,
	COST_STREAMS_MADE,
	COST_STREAMS_DESTROYED,
	COST_EVENTS_MADE,
	COST_EVENTS_DESTROYED,
	COST_DEVICE_SWITCHES,
	COST_CALLS,
	COST_BATCHED_COPIES,
	NCOSTS
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int cur_dev;
static int ndev = -1; /* -1: read FAKE_CUDA_DEVICES on first use */
static int driver_version = FAKE_DRIVER_VERSION;
static int concurrent_managed = 1; /* cudaDevAttrConcurrentManagedAccess */
static struct alloc *allocs;
static struct fstream *streams;
static struct fstream null_streams[MAX_DEVICES]; /* the legacy default stream of each device */
/* The per-thread default stream (cudaStreamPerThread, handle 2): one per
 * device here, not one per thread; it is still a stream of its own, not
 * synchronized with the legacy one, which is what a caller must not assume. */
static struct fstream pt_streams[MAX_DEVICES];
static struct fevent *events;
static struct fault faults[8];
static struct counter counters[64];
static int last_kind = -1;
static long prop_size; /* bytes the last properties call wrote */
static int delay_us;   /* fake_cuda_set_delay */
static long costs[NCOSTS];
static long round_trip_ns, call_ns; /* fake_cuda_set_latency */
static __thread long owed_ns;       /* this thread's call's latency, spun after unlocking */
static int held;       /* fake_cuda_hold */
#ifndef FAKE_UNRECORDED_NOT_READY
#define FAKE_UNRECORDED_NOT_READY 0
#endif
static int unrecorded_not_ready = FAKE_UNRECORDED_NOT_READY; /* fake_cuda_set_unrecorded_not_ready */

/* Driver API state. A thread's current context is valid only while its
 * generation is the global one: fake_cuda_reset bumps it, so after a reset
 * no thread has a current context, as in a fresh process. */
static int drv_init; /* cuInit succeeded (or the runtime initialized it) */
static struct pctx pctxs[MAX_DEVICES];
static long ctx_gen = 1;
static __thread struct {
	struct pctx *ctx;
	long gen;
} cur_ctx;

/* fake_pause sleeps before a call, outside the lock: a slow C call is what lets
 * the Go scheduler move a goroutine to another thread between two calls. */
static void fake_pause(void)
{
	int us = __atomic_load_n(&delay_us, __ATOMIC_RELAXED);
	if (us <= 0)
		return;
#ifdef _WIN32
	Sleep((us + 999) / 1000);
#else
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
	nanosleep(&ts, NULL);
#endif
}

static int devices(void)
{
	if (ndev < 0) {
		const char *e = getenv("FAKE_CUDA_DEVICES");
		ndev = e ? atoi(e) : 1;
		if (ndev < 0)
			ndev = 0;
		if (ndev > MAX_DEVICES)
			ndev = MAX_DEVICES;
	}
	return ndev;
}

/* spin busy-waits ns nanoseconds: a GPU call's latency, which a sleep
 * would overshoot by far. */
static void spin(long ns)
{
#ifdef _WIN32
	LARGE_INTEGER f, t0, t;
	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&t0);
	do
		QueryPerformanceCounter(&t);
	while ((t.QuadPart - t0.QuadPart) * 1000000000LL / f.QuadPart < ns);
#else
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
#endif
}

/* round_trip counts a wait for the device, and owes its latency. Called
 * with mu held. */
static void round_trip(void)
{
	costs[COST_ROUND_TRIPS]++;
	owed_ns += round_trip_ns;
}

/* A site is an entry point's counter, found at its first call since the
 * reset (counters_gen), so that counting a call costs no search: the
 * double's own time should not hide the latency it models. */
struct site {
	int slot;
	long gen;
};
static long counters_gen = 1;

/* enter counts the call and returns an injected error code, or 0. Called
 * with mu held. */
static int enter(const char *call, struct site *site)
{
	int i;
	costs[COST_CALLS]++;
	owed_ns += call_ns;
	if (site->gen != counters_gen) { /* first call since the reset: find its counter */
		for (i = 0; i < 63 && counters[i].call[0] && strcmp(counters[i].call, call) != 0; i++)
			;
		if (counters[i].call[0] == 0)
			snprintf(counters[i].call, sizeof counters[i].call, "%s", call);
		site->slot = i;
		site->gen = counters_gen;
	}
	counters[site->slot].n++;
	for (i = 0; i < 8; i++) {
		struct fault *f = &faults[i];
		if (!f->armed || strcmp(f->call, call) != 0)
			continue;
		if (f->after > 0) {
			f->after--;
			continue;
		}
		f->armed = 0;
		return f->code;
	}
	return 0;
}

static struct pctx *current_ctx(void)
{
	return cur_ctx.gen == ctx_gen ? cur_ctx.ctx : NULL;
}

static void set_current_ctx(struct pctx *c)
{
	cur_ctx.ctx = c;
	cur_ctx.gen = ctx_gen;
}

/* rt_bind is what the runtime does before device work: it initializes the
 * driver and makes the current device's primary context current on the
 * thread. Only a library with the driver API too can tell (fakecuda_mixed.c). */
static void rt_bind(int d)
{
	struct pctx *c = current_ctx();
	drv_init = 1;
	pctxs[d].dev = d;
	pctxs[d].rt_active = 1;
	if (!c || c->dev != d)
		set_current_ctx(&pctxs[d]);
}

/* A runtime newer than the driver cannot start; a runtime that reports a
 * constant of its own as the driver's version (FAKE_NO_DRIVER_CHECK,
 * chipStar) never says so. */
static int driver_too_old(void)
{
#ifdef FAKE_NO_DRIVER_CHECK
	return 0;
#else
	return driver_version < FAKE_RUNTIME_VERSION;
#endif
}

/* context is what a runtime call that needs the device checks first. */
static int context(void)
{
	if (driver_too_old())
		return cudaErrorInsufficientDriver;
	if (devices() == 0)
		return cudaErrorNoDevice;
	if (cur_dev >= devices())
		return cudaErrorInvalidDevice;
	if (!current_ctx())
		rt_bind(cur_dev);
	return 0;
}

/* NAME is the string of a name after macro expansion: "hipMalloc" for
 * cudaMalloc in fakehip.c. */
#define NAME_(x) #x
#define NAME(x) NAME_(x)

/* ENTER starts every call: count it, fail it if a fault is armed.
 * ENTER_CTX also checks what a runtime call that needs a device checks. */
#define ENTER(fn)                              \
	int rc_;                                   \
	static struct site site_;                  \
	fake_pause();                              \
	pthread_mutex_lock(&mu);                   \
	if ((rc_ = enter(NAME(fn), &site_)) != 0) \
		return unlock(rc_);

#define ENTER_CTX(fn)                 \
	ENTER(fn)                         \
	if ((rc_ = context()) != 0)       \
		return unlock(rc_);

/* unlock ends a call: it releases mu, then takes the call's latency. */
static cudaError_t unlock(cudaError_t rc)
{
	long owed = owed_ns;
	owed_ns = 0;
	pthread_mutex_unlock(&mu);
	if (owed > 0)
		spin(owed);
	return rc;
}

/* find returns the allocation holding [p, p+n), or NULL; *partial is set
 * when p is inside an allocation that the range overruns. */
static struct alloc *find(const void *p, size_t n, int *partial)
{
	struct alloc *a;
	const unsigned char *q = p;
	*partial = 0;
	for (a = allocs; a; a = a->next) {
		if (q >= a->p && q < a->p + a->n) {
			if (n > (size_t)(a->p + a->n - q)) {
				*partial = 1;
				return NULL;
			}
			return a;
		}
	}
	return NULL;
}

/* implicit reports whether a handle names a default stream: NULL, the
 * legacy stream (1) or the per-thread stream (2). */
static int implicit(cudaStream_t s)
{
	return (uintptr_t)s <= 2;
}

static struct fstream *live_stream(cudaStream_t s)
{
	struct fstream *x;
	if (s == NULL || ((uintptr_t)s == 1 && FAKE_STREAM_LEGACY)) {
		null_streams[cur_dev].dev = cur_dev;
		return &null_streams[cur_dev];
	}
	if ((uintptr_t)s == 2) {
		pt_streams[cur_dev].dev = cur_dev;
		return &pt_streams[cur_dev];
	}
	for (x = streams; x; x = x->next)
		if (x == s && x->magic == STREAM_MAGIC)
			return x;
	return NULL;
}

static struct fevent *live_event(cudaEvent_t e)
{
	struct fevent *x;
	for (x = events; x; x = x->next)
		if (x == e && x->magic == EVENT_MAGIC)
			return x;
	return NULL;
}

static void enqueue(struct fstream *s, struct op *o)
{
	o->seq = ++s->enq;
	o->next = NULL;
	if (s->tail)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
}

/* run_until performs the queued work of s up to sequence number k. An op is
 * unlinked before it runs, so waits between streams always end. */
static void run_until(struct fstream *s, long k)
{
	while (s->head && s->head->seq <= k) {
		struct op *o = s->head;
		s->head = o->next;
		if (!s->head)
			s->tail = NULL;
		if (o->type == OP_COPY)
			memmove(o->dst, o->src, o->n);
		else if (o->wait_s)
			run_until(o->wait_s, o->wait_seq);
		s->done = o->seq;
		free(o);
	}
}

static void run_all(void)
{
	struct fstream *s;
	int i;
	for (i = 0; i < MAX_DEVICES; i++) {
		run_until(&null_streams[i], null_streams[i].enq);
		run_until(&pt_streams[i], pt_streams[i].enq);
	}
	for (s = streams; s; s = s->next)
		run_until(s, s->enq);
}

/* ---- version, devices, errors ---- */

RT_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
	ENTER(cudaRuntimeGetVersion);
	if (!v)
		return unlock(cudaErrorInvalidValue);
	*v = FAKE_RUNTIME_VERSION;
	return unlock(cudaSuccess);
}

static cudaError_t driver_get_version(int *v)
{
	if (!v)
		return cudaErrorInvalidValue;
	*v = driver_version;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
	ENTER(cudaDriverGetVersion);
	return unlock(driver_get_version(v));
}

static cudaError_t get_device_count(int *n)
{
	if (!n)
		return cudaErrorInvalidValue;
	*n = 0;
	if (driver_too_old())
		return cudaErrorInsufficientDriver;
	if (devices() == 0)
		return cudaErrorNoDevice;
	*n = devices();
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
	ENTER(cudaGetDeviceCount);
	return unlock(get_device_count(n));
}

/* set_device also makes d's primary context current on the thread, as the
 * runtime does (not a driver-API retain). */
static cudaError_t set_device(int d)
{
	if (driver_too_old())
		return cudaErrorInsufficientDriver;
	if (devices() == 0)
		return cudaErrorNoDevice;
	if (d < 0 || d >= devices())
		return cudaErrorInvalidDevice;
	cur_dev = d;
	rt_bind(d);
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaSetDevice(int d)
{
	ENTER(cudaSetDevice);
	costs[COST_DEVICE_SWITCHES]++;
	return unlock(set_device(d));
}

static cudaError_t get_device(int *d)
{
	if (!d)
		return cudaErrorInvalidValue;
	*d = cur_dev;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaGetDevice(int *d)
{
	ENTER_CTX(cudaGetDevice);
	return unlock(get_device(d));
}

static cudaError_t props(void *prop, int d)
{
	prop_size = 0;
	if (!prop)
		return cudaErrorInvalidValue;
	if (d < 0 || d >= devices())
		return cudaErrorInvalidDevice;
	memset(prop, 0, PROP_NAME_LEN);
	snprintf(prop, PROP_NAME_LEN, "Fake CUDA Device %d", d);
	memset((char *)prop + PROP_NAME_LEN, PROP_FILL, FAKE_PROP_SIZE - PROP_NAME_LEN);
	prop_size = FAKE_PROP_SIZE;
	return cudaSuccess;
}

#ifndef FAKE_ONLY_VERSIONED_PROPS
RT_EXPORT cudaError_t cudaGetDeviceProperties(void *prop, int d)
{
	ENTER_CTX(cudaGetDeviceProperties);
	return unlock(props(prop, d));
}
#endif

#ifndef FAKE_CUDA_OLD
RT_EXPORT cudaError_t cudaGetDeviceProperties_v2(void *prop, int d)
{
	ENTER_CTX(cudaGetDeviceProperties_v2);
	return unlock(props(prop, d));
}
#endif

static cudaError_t device_attribute(int *v, int attr, int d)
{
	if (!v)
		return cudaErrorInvalidValue;
	if (d < 0 || d >= devices())
		return cudaErrorInvalidDevice;
	switch (attr) {
	case FAKE_ATTR_CC_MAJOR:
		*v = FAKE_CC_MAJOR;
		break;
	case FAKE_ATTR_CC_MINOR:
		*v = FAKE_CC_MINOR;
		break;
	case FAKE_ATTR_CONCURRENT_MANAGED:
		*v = concurrent_managed;
		break;
	default:
		return cudaErrorInvalidValue;
	}
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaDeviceGetAttribute(int *v, int attr, int d)
{
	ENTER_CTX(cudaDeviceGetAttribute);
	return unlock(device_attribute(v, attr, d));
}

static const struct {
	int code;
	const char *name, *text;
} errs[] = {
#define ERR(code, text) {code, NAME(code), text}
	ERR(cudaSuccess, "no error"),
	ERR(cudaErrorInvalidValue, "invalid argument"),
	ERR(cudaErrorMemoryAllocation, "out of memory"),
	ERR(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
	ERR(cudaErrorInsufficientDriver,
	    "CUDA driver version is insufficient for CUDA runtime version"),
	ERR(cudaErrorNoDevice, "no CUDA-capable device is detected"),
	ERR(cudaErrorInvalidDevice, "invalid device ordinal"),
	ERR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
	ERR(cudaErrorNotReady, "device not ready"),
#undef ERR
};

RT_EXPORT const char *cudaGetErrorString(cudaError_t code)
{
	size_t i;
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == code)
			return errs[i].text;
	return "unrecognized error code";
}

RT_EXPORT const char *cudaGetErrorName(cudaError_t code)
{
	size_t i;
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == code)
			return errs[i].name;
	return "unrecognized error code";
}

/* ---- memory ---- */

static size_t total_memory(void)
{
	/* 16 GiB, or 1 GiB where size_t has 32 bits */
	return sizeof(size_t) == 8 ? (size_t)16 << 30 : (size_t)1 << 30;
}

static size_t used_memory(int dev)
{
	size_t n = 0;
	struct alloc *a;
	for (a = allocs; a; a = a->next)
		if (a->dev == dev && a->kind != K_HOST)
			n += a->n;
	return n;
}

static cudaError_t mem_get_info(size_t *free_, size_t *total)
{
	if (!free_ || !total)
		return cudaErrorInvalidValue;
	*total = total_memory();
	*free_ = *total - used_memory(cur_dev);
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaMemGetInfo(size_t *free_, size_t *total)
{
	ENTER_CTX(cudaMemGetInfo);
	return unlock(mem_get_info(free_, total));
}

static cudaError_t alloc(void **p, size_t n, int kind)
{
	struct alloc *a;
	if (!p)
		return cudaErrorInvalidValue;
	*p = NULL;
	if (n == 0)
		return cudaSuccess;
	if (kind != K_HOST && n > total_memory() - used_memory(cur_dev))
		return cudaErrorMemoryAllocation;
	a = calloc(1, sizeof *a);
	if (!a)
		return cudaErrorMemoryAllocation;
	a->p = malloc(n);
	if (!a->p) {
		free(a);
		return cudaErrorMemoryAllocation;
	}
	memset(a->p, GARBAGE, n);
	a->n = n;
	a->kind = kind;
	a->dev = cur_dev;
	a->next = allocs;
	allocs = a;
	*p = a->p;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
	ENTER_CTX(cudaMalloc);
	return unlock(alloc(p, n, K_DEVICE));
}

/* hipHostMalloc takes flags where cudaMallocHost takes none (fakehip.c). */
#ifndef FAKE_HOST_MALLOC_FLAGS
#define FAKE_HOST_MALLOC_FLAGS
#endif

/* FAKE_NO_HOST_MALLOC leaves out cudaMallocHost and cudaFreeHost (a HIP
 * that dropped the deprecated hipHostMalloc and hipHostFree). */
#ifndef FAKE_NO_HOST_MALLOC
RT_EXPORT cudaError_t cudaMallocHost(void **p, size_t n FAKE_HOST_MALLOC_FLAGS)
{
	ENTER_CTX(cudaMallocHost);
	return unlock(alloc(p, n, K_HOST));
}
#endif

#ifndef FAKE_CUDA_OLD
/* managed_flags: cudaMemAttachGlobal 1, cudaMemAttachHost 2 (the driver's
 * CU_MEM_ATTACH_GLOBAL and CU_MEM_ATTACH_HOST are the same). */
static int managed_flags(unsigned flags)
{
	return flags == 1 || flags == 2;
}

RT_EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
	ENTER_CTX(cudaMallocManaged);
	if (!managed_flags(flags))
		return unlock(cudaErrorInvalidValue);
	return unlock(alloc(p, n, K_MANAGED));
}
#endif

/* release frees the allocation based at p if its kind is accepted; NULL is
 * a no-op. Like CUDA it first lets all queued work finish. */
static cudaError_t release(void *p, int host)
{
	struct alloc **pa, *a;
	if (!p)
		return cudaSuccess;
	for (pa = &allocs; (a = *pa) != NULL; pa = &a->next) {
		if (a->p != p)
			continue;
		if ((a->kind == K_HOST) != host)
			return cudaErrorInvalidValue;
		if (!host && a->dev != cur_dev)
			return cudaErrorInvalidDevice; /* stricter than CUDA */
		run_all();
		*pa = a->next;
		free(a->p);
		free(a);
		return cudaSuccess;
	}
	return cudaErrorInvalidValue;
}

RT_EXPORT cudaError_t cudaFree(void *p)
{
	ENTER_CTX(cudaFree);
	return unlock(release(p, 0));
}

#ifndef FAKE_NO_HOST_MALLOC
RT_EXPORT cudaError_t cudaFreeHost(void *p)
{
	ENTER_CTX(cudaFreeHost);
	return unlock(release(p, 1));
}
#endif

/* side classifies one end of a copy: 0 host memory the double did not
 * allocate, else the allocation kind; -1 a range overrunning an allocation;
 * -2 device memory of another device than the current one. */
static int side(const void *p, size_t n)
{
	int partial;
	struct alloc *a = find(p, n, &partial);
	if (partial)
		return -1;
	if (!a)
		return 0;
	if (a->kind != K_HOST && a->dev != cur_dev)
		return -2;
	return a->kind;
}

/* memcpy_async queues a copy checked as kind says; the driver's copies
 * come here too, with the kind their name implies. */
static cudaError_t memcpy_async(void *dst, const void *src, size_t n, int kind, cudaStream_t stream)
{
	struct fstream *s;
	struct op *o;
	int d, r, ok;
	last_kind = kind;
	s = live_stream(stream);
	if (!s || s->dev != cur_dev)
		return cudaErrorInvalidResourceHandle;
	if (n == 0)
		return cudaSuccess;
	if (!dst || !src)
		return cudaErrorInvalidValue;
	d = side(dst, n);
	r = side(src, n);
	if (d == -1 || r == -1)
		return cudaErrorInvalidValue;
	if (d == -2 || r == -2)
		return cudaErrorInvalidDevice; /* stricter than CUDA */
#define ON_DEVICE(x) ((x) == K_DEVICE || (x) == K_MANAGED)
#define ON_HOST(x) ((x) != K_DEVICE)
	switch (kind) {
	case HostToHost:
		ok = ON_HOST(r) && ON_HOST(d);
		break;
	case HostToDevice:
		ok = ON_HOST(r) && ON_DEVICE(d);
		break;
	case DeviceToHost:
		ok = ON_DEVICE(r) && ON_HOST(d);
		break;
	case DeviceToDevice:
		ok = ON_DEVICE(r) && ON_DEVICE(d);
		break;
	case Default:
		ok = 1;
		break;
	default:
		ok = 0;
	}
	if (!ok)
		return cudaErrorInvalidMemcpyDirection;
	o = calloc(1, sizeof *o);
	if (!o)
		return cudaErrorMemoryAllocation;
	o->type = OP_COPY;
	o->dst = dst;
	o->src = src;
	o->n = n;
	enqueue(s, o);
	/* CUDA's API synchronization rules: a copy from device memory to
	 * pageable host memory returns only once it has completed (so once the
	 * stream's earlier work has); every other copy may still be pending,
	 * pageable sources included ("might be synchronous"), and is here. */
	if (d == 0 && ON_DEVICE(r)) {
		costs[COST_PAGEABLE_COPIES]++;
		round_trip();
		run_until(s, o->seq);
	}
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t stream)
{
	ENTER_CTX(cudaMemcpyAsync);
	return unlock(memcpy_async(dst, src, n, kind, stream));
}

/* cudaMemcpyAttributes (CUmemcpyAttributes): how a batch's copies read
 * their source (cudaMemcpySrcAccessOrderStream 1, DuringApiCall 2, Any
 * 3), location hints, flags. */
struct memcpy_attrs {
	int src_access_order;
	struct {
		int type, id;
	} src_loc, dst_loc;
	unsigned flags;
};

/* memcpy_batch is cudaMemcpyBatchAsync (CUDA 12.8): count copies, each
 * with the direction its pointers give, under the attributes attrs[k]
 * from the copy attrs_idxs[k] on; fail, where given, says which copy
 * failed (SIZE_MAX: none). The copies are queued on the stream as
 * cudaMemcpyAsync's are, one into pageable memory done at once. */
static __attribute__((unused)) cudaError_t memcpy_batch(void **dsts, void **srcs, size_t *sizes, size_t count, struct memcpy_attrs *attrs,
				size_t *attrs_idxs, size_t nattrs, size_t *fail, cudaStream_t stream)
{
	size_t i;
	cudaError_t rc;
	if (fail)
		*fail = SIZE_MAX;
	if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attrs_idxs || nattrs == 0 || nattrs > count ||
	    attrs_idxs[0] != 0)
		return cudaErrorInvalidValue;
	for (i = 0; i < nattrs; i++)
		if (attrs[i].src_access_order < 1 || attrs[i].src_access_order > 3 ||
		    (i > 0 && attrs_idxs[i] <= attrs_idxs[i - 1]) || attrs_idxs[i] >= count)
			return cudaErrorInvalidValue;
	for (i = 0; i < count; i++) {
		if ((rc = memcpy_async(dsts[i], srcs[i], sizes[i], Default, stream)) != 0) {
			if (fail)
				*fail = i;
			return rc;
		}
	}
	costs[COST_BATCHED_COPIES]++;
	return cudaSuccess;
}

/* The runtime's batched copy has a failIdx argument until CUDA 13 (and in
 * every HIP: fakehip.c sets FAKE_BATCH_FAILIDX). */
#ifndef FAKE_BATCH_FAILIDX
#define FAKE_BATCH_FAILIDX (FAKE_RUNTIME_VERSION < 13000)
#endif
#if !defined(FAKE_CUDA_OLD) && !defined(FAKE_NO_BATCH)
#if FAKE_BATCH_FAILIDX
RT_EXPORT cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct memcpy_attrs *attrs,
					   size_t *attrs_idxs, size_t nattrs, size_t *fail, cudaStream_t stream)
{
	ENTER_CTX(cudaMemcpyBatchAsync);
	return unlock(memcpy_batch(dsts, srcs, sizes, count, attrs, attrs_idxs, nattrs, fail, stream));
}
#else
RT_EXPORT cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct memcpy_attrs *attrs,
					   size_t *attrs_idxs, size_t nattrs, cudaStream_t stream)
{
	ENTER_CTX(cudaMemcpyBatchAsync);
	return unlock(memcpy_batch(dsts, srcs, sizes, count, attrs, attrs_idxs, nattrs, NULL, stream));
}
#endif
#endif

/* ---- streams ---- */

static cudaError_t stream_create(cudaStream_t *ps, unsigned flags)
{
	struct fstream *s;
	if (!ps || flags > 1) /* cudaStreamDefault, cudaStreamNonBlocking */
		return cudaErrorInvalidValue;
	s = calloc(1, sizeof *s);
	if (!s)
		return cudaErrorMemoryAllocation;
	s->magic = STREAM_MAGIC;
	s->dev = cur_dev;
	s->flags = flags;
	s->next = streams;
	streams = s;
	*ps = s;
	costs[COST_STREAMS_MADE]++;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned flags)
{
	ENTER_CTX(cudaStreamCreateWithFlags);
	return unlock(stream_create(ps, flags));
}

static cudaError_t stream_synchronize(cudaStream_t stream)
{
	struct fstream *s = live_stream(stream);
	if (!s || s->dev != cur_dev)
		return cudaErrorInvalidResourceHandle;
	if (s->done < s->enq)
		round_trip();
	run_until(s, s->enq);
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	ENTER_CTX(cudaStreamSynchronize);
	return unlock(stream_synchronize(stream));
}

/* unwait drops the waits on s queued on x (s is going away). */
static void unwait(struct fstream *x, struct fstream *s)
{
	struct op *o;
	for (o = x->head; o; o = o->next)
		if (o->wait_s == s)
			o->wait_s = NULL;
}

static cudaError_t stream_destroy(cudaStream_t stream)
{
	struct fstream **ps, *s, *x;
	struct fevent *e;
	struct op *o;
	long last;
	int i;
	/* the default streams are not the caller's to destroy */
	s = implicit(stream) ? NULL : live_stream(stream);
	if (!s || s->dev != cur_dev)
		return cudaErrorInvalidResourceHandle;
	/* CUDA lets queued work finish, and returns at once; then nothing may
	 * point at s. The copies run here; waits with no copy after them order
	 * nothing any more and are dropped without running what they wait
	 * for (a destroy does not wait for another stream's work). */
	last = s->done;
	for (o = s->head; o; o = o->next)
		if (o->type == OP_COPY)
			last = o->seq;
	run_until(s, last);
	while ((o = s->head)) {
		s->head = o->next;
		free(o);
	}
	s->tail = NULL;
	for (i = 0; i < MAX_DEVICES; i++) {
		unwait(&null_streams[i], s);
		unwait(&pt_streams[i], s);
	}
	for (x = streams; x; x = x->next)
		unwait(x, s);
	for (e = events; e; e = e->next)
		if (e->s == s)
			e->s = NULL;
	for (ps = &streams; *ps != s; ps = &(*ps)->next)
		;
	*ps = s->next;
	s->magic = 0;
	free(s);
	costs[COST_STREAMS_DESTROYED]++;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	ENTER_CTX(cudaStreamDestroy);
	return unlock(stream_destroy(stream));
}

static cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
	struct fstream *s = live_stream(stream);
	struct fevent *e = live_event(event);
	struct op *o;
	if (!s || !e || s->dev != cur_dev)
		return cudaErrorInvalidResourceHandle;
	if (flags > 1) /* cudaEventWaitDefault, cudaEventWaitExternal */
		return cudaErrorInvalidValue;
	if (!e->s || e->s->done >= e->seq)
		return cudaSuccess; /* nothing left to wait for */
	o = calloc(1, sizeof *o);
	if (!o)
		return cudaErrorMemoryAllocation;
	o->type = OP_WAIT;
	o->wait_s = e->s;
	o->wait_seq = e->seq;
	enqueue(s, o);
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
	ENTER_CTX(cudaStreamWaitEvent);
	return unlock(stream_wait_event(stream, event, flags));
}

/* ---- events ---- */

static cudaError_t event_create(cudaEvent_t *pe, unsigned flags)
{
	struct fevent *e;
	/* cudaEventBlockingSync 1, cudaEventDisableTiming 2, cudaEventInterprocess 4 (needs 2) */
	if (!pe || (flags & ~7u) || ((flags & 4) && !(flags & 2)))
		return cudaErrorInvalidValue;
	e = calloc(1, sizeof *e);
	if (!e)
		return cudaErrorMemoryAllocation;
	e->magic = EVENT_MAGIC;
	e->dev = cur_dev;
	e->flags = flags;
	e->next = events;
	events = e;
	*pe = e;
	costs[COST_EVENTS_MADE]++;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned flags)
{
	ENTER_CTX(cudaEventCreateWithFlags);
	return unlock(event_create(pe, flags));
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
{
	struct fevent *e = live_event(event);
	struct fstream *s = live_stream(stream);
	if (!e || !s || s->dev != cur_dev || e->dev != s->dev)
		return cudaErrorInvalidResourceHandle;
	e->s = s;
	e->seq = s->enq;
	e->recorded = 1;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	ENTER_CTX(cudaEventRecord);
	return unlock(event_record(event, stream));
}

static cudaError_t event_synchronize(cudaEvent_t event)
{
	struct fevent *e = live_event(event);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (e->s && e->s->done < e->seq) {
		round_trip();
		run_until(e->s, e->seq);
	}
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	ENTER_CTX(cudaEventSynchronize);
	return unlock(event_synchronize(event));
}

/* The double's device makes progress when asked: a query runs the work up
 * to the event, unless fake_cuda_hold stalls it (a kernel that never ends). */
static cudaError_t event_query(cudaEvent_t event)
{
	struct fevent *e = live_event(event);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (!e->recorded && __atomic_load_n(&unrecorded_not_ready, __ATOMIC_RELAXED))
		return cudaErrorNotReady;
	if (e->s && e->s->done < e->seq) {
		if (held)
			return cudaErrorNotReady;
		run_until(e->s, e->seq);
	}
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	ENTER_CTX(cudaEventQuery);
	return unlock(event_query(event));
}

static cudaError_t event_destroy(cudaEvent_t event)
{
	struct fevent **pe, *e = live_event(event);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	for (pe = &events; *pe != e; pe = &(*pe)->next)
		;
	*pe = e->next;
	e->magic = 0;
	free(e);
	costs[COST_EVENTS_DESTROYED]++;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	ENTER_CTX(cudaEventDestroy);
	return unlock(event_destroy(event));
}

/* ---- control functions for tests ---- */

/* fake_cuda_fail makes the named call fail once with code, after
 * after_n_calls more successful calls of it. */
EXPORT void fake_cuda_fail(const char *call, int code, int after_n_calls)
{
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < 8; i++) {
		if (!faults[i].armed) {
			snprintf(faults[i].call, sizeof faults[i].call, "%s", call);
			faults[i].code = code;
			faults[i].after = after_n_calls;
			faults[i].armed = 1;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

/* clear_stream drops the queued work of a default stream and empties it. */
static void clear_stream(struct fstream *s, int dev)
{
	struct op *o;
	while ((o = s->head) != NULL) {
		s->head = o->next;
		free(o);
	}
	memset(s, 0, sizeof *s);
	s->dev = dev;
}

/* fake_cuda_reset frees everything and restores the defaults. No thread
 * has a current context afterwards, and the driver needs cuInit again. */
EXPORT void fake_cuda_reset(void)
{
	struct alloc *a;
	struct fstream *s;
	struct fevent *e;
	struct op *o;
	int i;
	pthread_mutex_lock(&mu);
	while ((a = allocs) != NULL) {
		allocs = a->next;
		free(a->p);
		free(a);
	}
	for (i = 0; i < MAX_DEVICES; i++) {
		clear_stream(&null_streams[i], i);
		clear_stream(&pt_streams[i], i);
		memset(&pctxs[i], 0, sizeof pctxs[i]);
		pctxs[i].dev = i;
	}
	while ((s = streams) != NULL) {
		streams = s->next;
		while ((o = s->head) != NULL) {
			s->head = o->next;
			free(o);
		}
		free(s);
	}
	while ((e = events) != NULL) {
		events = e->next;
		free(e);
	}
	memset(faults, 0, sizeof faults);
	memset(counters, 0, sizeof counters);
	counters_gen++;
	memset(costs, 0, sizeof costs);
	round_trip_ns = call_ns = 0;
	ndev = -1;
	driver_version = FAKE_DRIVER_VERSION;
	concurrent_managed = 1;
	__atomic_store_n(&delay_us, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&held, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&unrecorded_not_ready, FAKE_UNRECORDED_NOT_READY, __ATOMIC_RELAXED);
	cur_dev = 0;
	last_kind = -1;
	prop_size = 0;
	drv_init = 0;
	ctx_gen++;
	pthread_mutex_unlock(&mu);
}

EXPORT void fake_cuda_set_devices(int n)
{
	pthread_mutex_lock(&mu);
	ndev = n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
	pthread_mutex_unlock(&mu);
}

/* fake_cuda_hold(1) stalls the device for cudaEventQuery: work queued
 * before an event stays pending and the query answers cudaErrorNotReady,
 * as for a kernel that never ends; fake_cuda_hold(0) lets it run again. */
EXPORT void fake_cuda_hold(int on)
{
	__atomic_store_n(&held, on, __ATOMIC_RELAXED);
}

/* fake_cuda_set_unrecorded_not_ready(1) makes cudaEventQuery answer
 * cudaErrorNotReady for an event never recorded, for ever, as chipStar's
 * hipEventQuery does (CUDA and HIP document cudaSuccess: nothing to wait
 * for); 0 gives the documented answer. The default is the runtime's
 * FAKE_UNRECORDED_NOT_READY. */
EXPORT void fake_cuda_set_unrecorded_not_ready(int on)
{
	__atomic_store_n(&unrecorded_not_ready, on, __ATOMIC_RELAXED);
}

/* fake_cuda_set_delay makes every call (runtime or driver) sleep us
 * microseconds first. */
EXPORT void fake_cuda_set_delay(int us)
{
	__atomic_store_n(&delay_us, us, __ATOMIC_RELAXED);
}

EXPORT void fake_cuda_set_driver_version(int v)
{
	pthread_mutex_lock(&mu);
	driver_version = v;
	pthread_mutex_unlock(&mu);
}

/* fake_cuda_set_concurrent_managed sets what every device answers for
 * cudaDevAttrConcurrentManagedAccess: 1 (the default, Linux on Pascal and
 * later) or 0 (Windows, WSL, older GPUs). */
EXPORT void fake_cuda_set_concurrent_managed(int v)
{
	pthread_mutex_lock(&mu);
	concurrent_managed = v;
	pthread_mutex_unlock(&mu);
}

EXPORT long fake_cuda_live_allocations(void)
{
	long n = 0;
	struct alloc *a;
	pthread_mutex_lock(&mu);
	for (a = allocs; a; a = a->next)
		n++;
	pthread_mutex_unlock(&mu);
	return n;
}

EXPORT long fake_cuda_live_streams(void)
{
	long n = 0;
	struct fstream *s;
	pthread_mutex_lock(&mu);
	for (s = streams; s; s = s->next)
		n++;
	pthread_mutex_unlock(&mu);
	return n;
}

EXPORT long fake_cuda_live_events(void)
{
	long n = 0;
	struct fevent *e;
	pthread_mutex_lock(&mu);
	for (e = events; e; e = e->next)
		n++;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_cuda_pending_ops counts queued work not yet performed. */
EXPORT long fake_cuda_pending_ops(void)
{
	long n = 0;
	struct fstream *s;
	struct op *o;
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_DEVICES; i++) {
		for (o = null_streams[i].head; o; o = o->next)
			n++;
		for (o = pt_streams[i].head; o; o = o->next)
			n++;
	}
	for (s = streams; s; s = s->next)
		for (o = s->head; o; o = o->next)
			n++;
	pthread_mutex_unlock(&mu);
	return n;
}

EXPORT long fake_cuda_call_count(const char *call)
{
	long n = 0;
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < 64 && counters[i].call[0]; i++)
		if (strcmp(counters[i].call, call) == 0)
			n = counters[i].n;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_cuda_last_memcpy_kind is the kind argument of the last cudaMemcpyAsync,
 * or for the driver's copies 1 HtoD, 2 DtoH, 3 DtoD, 4 cuMemcpyAsync. */
EXPORT int fake_cuda_last_memcpy_kind(void)
{
	int k;
	pthread_mutex_lock(&mu);
	k = last_kind;
	pthread_mutex_unlock(&mu);
	return k;
}

/* fake_cuda_stream_flags and fake_cuda_event_flags return the flags a live
 * stream or event was created with, or -1. */
EXPORT int fake_cuda_stream_flags(cudaStream_t stream)
{
	int f = -1;
	struct fstream *s;
	pthread_mutex_lock(&mu);
	for (s = streams; s; s = s->next)
		if (s == stream)
			f = (int)s->flags;
	pthread_mutex_unlock(&mu);
	return f;
}

EXPORT int fake_cuda_event_flags(cudaEvent_t event)
{
	int f = -1;
	struct fevent *e;
	pthread_mutex_lock(&mu);
	e = live_event(event);
	if (e)
		f = (int)e->flags;
	pthread_mutex_unlock(&mu);
	return f;
}

/* fake_cuda_stream_device returns the device of a live stream, or -1. */
EXPORT int fake_cuda_stream_device(cudaStream_t stream)
{
	int d = -1;
	struct fstream *s;
	pthread_mutex_lock(&mu);
	for (s = streams; s; s = s->next)
		if (s == stream)
			d = s->dev;
	pthread_mutex_unlock(&mu);
	return d;
}

/* fake_cuda_live_contexts counts the primary-context retains of the driver
 * API not yet released (the runtime's own hold is not counted). */
EXPORT long fake_cuda_live_contexts(void)
{
	long n = 0;
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_DEVICES; i++)
		n += pctxs[i].retains;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_cuda_prop_size is the number of bytes the last properties call
 * wrote: 0 if none since the reset, or if it failed. */
EXPORT long fake_cuda_prop_size(void)
{
	long n;
	pthread_mutex_lock(&mu);
	n = prop_size;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_cuda_costs copies the costs counted since the reset (see NCOSTS's
 * enum: round trips, copies into pageable memory, streams made and
 * destroyed, events made and destroyed, device switches, calls, batched
 * copies) into out, n at most, and returns how many there are. */
EXPORT int fake_cuda_costs(long *out, int n)
{
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < n && i < NCOSTS; i++)
		out[i] = costs[i];
	pthread_mutex_unlock(&mu);
	return NCOSTS;
}

/* fake_cuda_set_latency makes every call take call nanoseconds, and every
 * round trip to the device (see round_trip) rt more: an H200 on PCIe 5
 * takes about 7500 for a round trip and 200 for a call. */
EXPORT void fake_cuda_set_latency(long rt, long call)
{
	pthread_mutex_lock(&mu);
	round_trip_ns = rt;
	call_ns = call;
	pthread_mutex_unlock(&mu);
}
