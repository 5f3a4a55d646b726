/*
 * fakecudart.c: a test double of the libcudart subset that device/cuda
 * binds, on host memory (malloc), for machines without an NVIDIA GPU.
 *
 * It keeps real bookkeeping so that the Go bindings are proven, not just
 * called: an allocation table (kind, size, owning device), the current
 * device per thread, streams as queues whose asynchronous copies run only
 * when something synchronizes (so reading before a sync sees stale data),
 * events that record a stream position, and fault injection.
 *
 * Where CUDA would accept it, the double is stricter on purpose: work on a
 * stream, allocation or event of another device than the calling thread's
 * current one fails, which proves that the caller makes the right device
 * current on the thread that makes the call.
 *
 * Compiled with FAKE_CUDA_OLD defined (fakecudart_old.c) it leaves out
 * cudaMallocManaged and cudaGetDeviceProperties_v2, like an old runtime.
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
#define FAKE_PROP_SIZE 1024 /* the real cudaDeviceProp is about 1 KiB; name[256] comes first */
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
	struct fevent *next;
};

struct fault {
	char call[64];
	int code, after, armed;
};

struct counter {
	char call[64];
	long n;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int cur_dev;
static int ndev = -1; /* -1: read FAKE_CUDA_DEVICES on first use */
static int driver_version = FAKE_DRIVER_VERSION;
static int concurrent_managed = 1; /* cudaDevAttrConcurrentManagedAccess */
static struct alloc *allocs;
static struct fstream *streams;
static struct fstream null_streams[MAX_DEVICES]; /* the legacy default stream of each device */
static struct fevent *events;
static struct fault faults[8];
static struct counter counters[64];
static int last_kind = -1;
static int delay_us; /* fake_cuda_set_delay */
static int held;     /* fake_cuda_hold */

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

/* enter counts the call and returns an injected error code, or 0. Called
 * with mu held. */
static int enter(const char *call)
{
	int i;
	for (i = 0; i < 64; i++) {
		if (counters[i].call[0] == 0) {
			snprintf(counters[i].call, sizeof counters[i].call, "%s", call);
			counters[i].n = 1;
			break;
		}
		if (strcmp(counters[i].call, call) == 0) {
			counters[i].n++;
			break;
		}
	}
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

/* context is what a call that needs the device checks first. */
static int context(void)
{
	if (driver_version < FAKE_RUNTIME_VERSION)
		return cudaErrorInsufficientDriver;
	if (devices() == 0)
		return cudaErrorNoDevice;
	if (cur_dev >= devices())
		return cudaErrorInvalidDevice;
	return 0;
}

/* NAME is the string of a name after macro expansion: "hipMalloc" for
 * cudaMalloc in fakehip.c. */
#define NAME_(x) #x
#define NAME(x) NAME_(x)

/* ENTER starts every runtime call: count it, fail it if a fault is armed.
 * ENTER_CTX also checks what a call that needs a device checks. */
#define ENTER(fn)                     \
	int rc_;                          \
	fake_pause();                     \
	pthread_mutex_lock(&mu);          \
	if ((rc_ = enter(NAME(fn))) != 0) \
		return unlock(rc_);

#define ENTER_CTX(fn)                 \
	ENTER(fn)                         \
	if ((rc_ = context()) != 0)       \
		return unlock(rc_);

static cudaError_t unlock(cudaError_t rc)
{
	pthread_mutex_unlock(&mu);
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

static struct fstream *live_stream(cudaStream_t s)
{
	struct fstream *x;
	if (s == NULL) {
		null_streams[cur_dev].dev = cur_dev;
		return &null_streams[cur_dev];
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
	for (i = 0; i < MAX_DEVICES; i++)
		run_until(&null_streams[i], null_streams[i].enq);
	for (s = streams; s; s = s->next)
		run_until(s, s->enq);
}

/* ---- version, devices, errors ---- */

EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
	ENTER(cudaRuntimeGetVersion);
	if (!v)
		return unlock(cudaErrorInvalidValue);
	*v = FAKE_RUNTIME_VERSION;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
	ENTER(cudaDriverGetVersion);
	if (!v)
		return unlock(cudaErrorInvalidValue);
	*v = driver_version;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
	ENTER(cudaGetDeviceCount);
	if (!n)
		return unlock(cudaErrorInvalidValue);
	*n = 0;
	if (driver_version < FAKE_RUNTIME_VERSION)
		return unlock(cudaErrorInsufficientDriver);
	if (devices() == 0)
		return unlock(cudaErrorNoDevice);
	*n = devices();
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaSetDevice(int d)
{
	ENTER(cudaSetDevice);
	if (driver_version < FAKE_RUNTIME_VERSION)
		return unlock(cudaErrorInsufficientDriver);
	if (devices() == 0)
		return unlock(cudaErrorNoDevice);
	if (d < 0 || d >= devices())
		return unlock(cudaErrorInvalidDevice);
	cur_dev = d;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaGetDevice(int *d)
{
	ENTER_CTX(cudaGetDevice);
	if (!d)
		return unlock(cudaErrorInvalidValue);
	*d = cur_dev;
	return unlock(cudaSuccess);
}

static cudaError_t props(void *prop, int d)
{
	if (!prop)
		return cudaErrorInvalidValue;
	if (d < 0 || d >= devices())
		return cudaErrorInvalidDevice;
	memset(prop, 0, FAKE_PROP_SIZE);
	snprintf(prop, 256, "Fake CUDA Device %d", d);
	return cudaSuccess;
}

EXPORT cudaError_t cudaGetDeviceProperties(void *prop, int d)
{
	ENTER_CTX(cudaGetDeviceProperties);
	return unlock(props(prop, d));
}

#ifndef FAKE_CUDA_OLD
EXPORT cudaError_t cudaGetDeviceProperties_v2(void *prop, int d)
{
	ENTER_CTX(cudaGetDeviceProperties_v2);
	return unlock(props(prop, d));
}
#endif

EXPORT cudaError_t cudaDeviceGetAttribute(int *v, int attr, int d)
{
	ENTER_CTX(cudaDeviceGetAttribute);
	if (!v)
		return unlock(cudaErrorInvalidValue);
	if (d < 0 || d >= devices())
		return unlock(cudaErrorInvalidDevice);
	switch (attr) {
	case 75: /* cudaDevAttrComputeCapabilityMajor */
		*v = FAKE_CC_MAJOR;
		break;
	case 76: /* cudaDevAttrComputeCapabilityMinor */
		*v = FAKE_CC_MINOR;
		break;
	case 89: /* cudaDevAttrConcurrentManagedAccess */
		*v = concurrent_managed;
		break;
	default:
		return unlock(cudaErrorInvalidValue);
	}
	return unlock(cudaSuccess);
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
#undef ERR
};

EXPORT const char *cudaGetErrorString(cudaError_t code)
{
	size_t i;
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == code)
			return errs[i].text;
	return "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t code)
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

EXPORT cudaError_t cudaMemGetInfo(size_t *free_, size_t *total)
{
	ENTER_CTX(cudaMemGetInfo);
	if (!free_ || !total)
		return unlock(cudaErrorInvalidValue);
	*total = total_memory();
	*free_ = *total - used_memory(cur_dev);
	return unlock(cudaSuccess);
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

EXPORT cudaError_t cudaMalloc(void **p, size_t n)
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
EXPORT cudaError_t cudaMallocHost(void **p, size_t n FAKE_HOST_MALLOC_FLAGS)
{
	ENTER_CTX(cudaMallocHost);
	return unlock(alloc(p, n, K_HOST));
}
#endif

#ifndef FAKE_CUDA_OLD
EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
	ENTER_CTX(cudaMallocManaged);
	if (flags != 1 && flags != 2) /* cudaMemAttachGlobal, cudaMemAttachHost */
		return unlock(cudaErrorInvalidValue);
	return unlock(alloc(p, n, K_MANAGED));
}
#endif

/* release frees the allocation based at p if its kind is accepted. Like
 * CUDA it first lets all queued work finish. */
static cudaError_t release(void *p, int host)
{
	struct alloc **pa, *a;
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

EXPORT cudaError_t cudaFree(void *p)
{
	ENTER_CTX(cudaFree);
	if (!p)
		return unlock(cudaSuccess);
	return unlock(release(p, 0));
}

#ifndef FAKE_NO_HOST_MALLOC
EXPORT cudaError_t cudaFreeHost(void *p)
{
	ENTER_CTX(cudaFreeHost);
	if (!p)
		return unlock(cudaSuccess);
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

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t stream)
{
	struct fstream *s;
	struct op *o;
	int d, r, ok;
	ENTER_CTX(cudaMemcpyAsync);
	last_kind = kind;
	s = live_stream(stream);
	if (!s || s->dev != cur_dev)
		return unlock(cudaErrorInvalidResourceHandle);
	if (n == 0)
		return unlock(cudaSuccess);
	if (!dst || !src)
		return unlock(cudaErrorInvalidValue);
	d = side(dst, n);
	r = side(src, n);
	if (d == -1 || r == -1)
		return unlock(cudaErrorInvalidValue);
	if (d == -2 || r == -2)
		return unlock(cudaErrorInvalidDevice); /* stricter than CUDA */
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
		return unlock(cudaErrorInvalidMemcpyDirection);
	o = calloc(1, sizeof *o);
	if (!o)
		return unlock(cudaErrorMemoryAllocation);
	o->type = OP_COPY;
	o->dst = dst;
	o->src = src;
	o->n = n;
	enqueue(s, o);
	return unlock(cudaSuccess);
}

/* ---- streams ---- */

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned flags)
{
	struct fstream *s;
	ENTER_CTX(cudaStreamCreateWithFlags);
	if (!ps || flags > 1) /* cudaStreamDefault, cudaStreamNonBlocking */
		return unlock(cudaErrorInvalidValue);
	s = calloc(1, sizeof *s);
	if (!s)
		return unlock(cudaErrorMemoryAllocation);
	s->magic = STREAM_MAGIC;
	s->dev = cur_dev;
	s->flags = flags;
	s->next = streams;
	streams = s;
	*ps = s;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	struct fstream *s;
	ENTER_CTX(cudaStreamSynchronize);
	s = live_stream(stream);
	if (!s || s->dev != cur_dev)
		return unlock(cudaErrorInvalidResourceHandle);
	run_until(s, s->enq);
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	struct fstream **ps, *s, *x;
	struct op *o;
	struct fevent *e;
	ENTER_CTX(cudaStreamDestroy);
	s = stream ? live_stream(stream) : NULL;
	if (!s || s->dev != cur_dev)
		return unlock(cudaErrorInvalidResourceHandle);
	/* CUDA lets queued work finish; then nothing may point at s. */
	run_until(s, s->enq);
	for (x = streams; x; x = x->next)
		for (o = x->head; o; o = o->next)
			if (o->wait_s == s)
				o->wait_s = NULL;
	for (e = events; e; e = e->next)
		if (e->s == s)
			e->s = NULL;
	for (ps = &streams; *ps != s; ps = &(*ps)->next)
		;
	*ps = s->next;
	s->magic = 0;
	free(s);
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
	struct fstream *s;
	struct fevent *e;
	struct op *o;
	ENTER_CTX(cudaStreamWaitEvent);
	s = live_stream(stream);
	e = live_event(event);
	if (!s || !e || s->dev != cur_dev)
		return unlock(cudaErrorInvalidResourceHandle);
	if (flags > 1) /* cudaEventWaitDefault, cudaEventWaitExternal */
		return unlock(cudaErrorInvalidValue);
	if (!e->s || e->s->done >= e->seq)
		return unlock(cudaSuccess); /* nothing left to wait for */
	o = calloc(1, sizeof *o);
	if (!o)
		return unlock(cudaErrorMemoryAllocation);
	o->type = OP_WAIT;
	o->wait_s = e->s;
	o->wait_seq = e->seq;
	enqueue(s, o);
	return unlock(cudaSuccess);
}

/* ---- events ---- */

EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned flags)
{
	struct fevent *e;
	ENTER_CTX(cudaEventCreateWithFlags);
	/* cudaEventBlockingSync 1, cudaEventDisableTiming 2, cudaEventInterprocess 4 (needs 2) */
	if (!pe || (flags & ~7u) || ((flags & 4) && !(flags & 2)))
		return unlock(cudaErrorInvalidValue);
	e = calloc(1, sizeof *e);
	if (!e)
		return unlock(cudaErrorMemoryAllocation);
	e->magic = EVENT_MAGIC;
	e->dev = cur_dev;
	e->flags = flags;
	e->next = events;
	events = e;
	*pe = e;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	struct fevent *e;
	struct fstream *s;
	ENTER_CTX(cudaEventRecord);
	e = live_event(event);
	s = live_stream(stream);
	if (!e || !s || s->dev != cur_dev || e->dev != s->dev)
		return unlock(cudaErrorInvalidResourceHandle);
	e->s = s;
	e->seq = s->enq;
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	struct fevent *e;
	ENTER_CTX(cudaEventSynchronize);
	e = live_event(event);
	if (!e)
		return unlock(cudaErrorInvalidResourceHandle);
	if (e->s)
		run_until(e->s, e->seq);
	return unlock(cudaSuccess);
}

/* The double's device makes progress when asked: a query runs the work up
 * to the event, unless fake_cuda_hold stalls it (a kernel that never ends). */
EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	struct fevent *e;
	ENTER_CTX(cudaEventQuery);
	e = live_event(event);
	if (!e)
		return unlock(cudaErrorInvalidResourceHandle);
	if (e->s && e->s->done < e->seq) {
		if (held)
			return unlock(cudaErrorNotReady);
		run_until(e->s, e->seq);
	}
	return unlock(cudaSuccess);
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	struct fevent **pe, *e;
	ENTER_CTX(cudaEventDestroy);
	e = live_event(event);
	if (!e)
		return unlock(cudaErrorInvalidResourceHandle);
	for (pe = &events; *pe != e; pe = &(*pe)->next)
		;
	*pe = e->next;
	e->magic = 0;
	free(e);
	return unlock(cudaSuccess);
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

/* fake_cuda_reset frees everything and restores the defaults. */
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
		while ((o = null_streams[i].head) != NULL) {
			null_streams[i].head = o->next;
			free(o);
		}
		memset(&null_streams[i], 0, sizeof null_streams[i]);
		null_streams[i].dev = i;
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
	ndev = -1;
	driver_version = FAKE_DRIVER_VERSION;
	concurrent_managed = 1;
	__atomic_store_n(&delay_us, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&held, 0, __ATOMIC_RELAXED);
	cur_dev = 0;
	last_kind = -1;
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

/* fake_cuda_set_delay makes every runtime call sleep us microseconds first. */
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
	for (i = 0; i < MAX_DEVICES; i++)
		for (o = null_streams[i].head; o; o = o->next)
			n++;
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

/* fake_cuda_last_memcpy_kind is the kind argument of the last cudaMemcpyAsync. */
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
