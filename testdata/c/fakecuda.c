/*
 * fakecuda.c: the test double of the libcuda.so.1 subset (the CUDA driver
 * API) that a driver-API binding needs: fakecudart.c's state and cores
 * behind the driver's entry points, so allocations, streams and events are
 * the same structures (a CUstream is a cudaStream_t, a CUevent a
 * cudaEvent_t). Built alone it exports no cuda* runtime symbol, as libcuda;
 * fakecuda_mixed.c defines FAKE_WITH_RUNTIME_API for a library with both
 * APIs, for tests that export with one and import with the other.
 *
 * Like the real driver: nothing but cuInit, cuDriverGetVersion and the
 * error strings works before cuInit (CUDA_ERROR_NOT_INITIALIZED), and
 * memory, copy, stream and event calls need a current context on the
 * calling thread (CUDA_ERROR_INVALID_CONTEXT). The only contexts are the
 * primary ones (cuDevicePrimaryCtxRetain); fake_cuda_live_contexts counts
 * the retains not released. The driver version is never checked against
 * the runtime's: the driver is the driver.
 */
#ifndef FAKE_WITH_RUNTIME_API
#define FAKE_NO_RUNTIME_API 1
#endif
#include "fakecudart.c"

typedef int CUresult;
typedef int CUdevice;
typedef uintptr_t CUdeviceptr; /* unsigned long long on LP64 and WIN64, 32 bits on 32-bit */
typedef struct pctx *CUcontext;
typedef cudaStream_t CUstream;
typedef cudaEvent_t CUevent;

/* Values from cuda.h (cudaError_enum). Where the runtime has the same
 * condition, it has the same number: cudaErrorMemoryAllocation 2,
 * cudaErrorInvalidDevice 101, cudaErrorInvalidResourceHandle 400,
 * cudaErrorNotReady 600, so the runtime cores' codes pass through. */
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_READY = 600,
};

/* drv is a runtime core's code as the driver's: the driver has no
 * invalid-direction code (its copies name the direction). */
static CUresult drv(cudaError_t rc)
{
	return rc == cudaErrorInvalidMemcpyDirection ? CUDA_ERROR_INVALID_VALUE : rc;
}

static int initialized(void)
{
	return drv_init ? 0 : CUDA_ERROR_NOT_INITIALIZED;
}

/* ctx_held: a primary context that exists, retained through the driver API
 * or in use by the runtime. */
static int ctx_held(const struct pctx *c)
{
	return c->retains > 0 || c->rt_active;
}

/* drv_context checks what a call on a context checks, and makes the
 * context's device the one the cores see. A context released to no
 * retains (and not held by the runtime) is gone. */
static int drv_context(void)
{
	struct pctx *c;
	if (!drv_init)
		return CUDA_ERROR_NOT_INITIALIZED;
	c = current_ctx();
	if (!c || !ctx_held(c) || c->dev >= devices())
		return CUDA_ERROR_INVALID_CONTEXT;
	cur_dev = c->dev;
	return 0;
}

/* ENTER_INIT: a call that needs cuInit; ENTER_DRV: one that needs a
 * current context too. */
#define ENTER_INIT(fn)                \
	ENTER(fn)                         \
	if ((rc_ = initialized()) != 0)   \
		return unlock(rc_);

#define ENTER_DRV(fn)                 \
	ENTER(fn)                         \
	if ((rc_ = drv_context()) != 0)   \
		return unlock(rc_);

/* ---- initialization, version, errors ---- */

EXPORT CUresult cuInit(unsigned flags)
{
	ENTER(cuInit);
	if (flags != 0)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	if (devices() == 0)
		return unlock(CUDA_ERROR_NO_DEVICE);
	drv_init = 1;
	return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	ENTER(cuDriverGetVersion);
	return unlock(driver_get_version(v));
}

static const struct {
	CUresult code;
	const char *name, *text;
} cu_errs[] = {
#define ERR(code, text) {code, #code, text}
	ERR(CUDA_SUCCESS, "no error"),
	ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	ERR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
	ERR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	ERR(CUDA_ERROR_NOT_READY, "device not ready"),
#undef ERR
};

/* error_text sets *p to the name or text of code; an unknown code is an
 * invalid value, with *p NULL, as the driver answers. */
static CUresult error_text(CUresult code, const char **p, int name)
{
	size_t i;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = NULL;
	for (i = 0; i < sizeof cu_errs / sizeof cu_errs[0]; i++) {
		if (cu_errs[i].code == code) {
			*p = name ? cu_errs[i].name : cu_errs[i].text;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult code, const char **p)
{
	ENTER(cuGetErrorString);
	return unlock(error_text(code, p, 0));
}

EXPORT CUresult cuGetErrorName(CUresult code, const char **p)
{
	ENTER(cuGetErrorName);
	return unlock(error_text(code, p, 1));
}

/* ---- devices ---- */

EXPORT CUresult cuDeviceGetCount(int *n)
{
	ENTER_INIT(cuDeviceGetCount);
	if (!n)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	*n = devices();
	return unlock(CUDA_SUCCESS);
}

/* A CUdevice is the ordinal on NVIDIA's drivers, but nothing promises it:
 * the double's differ (DEVICE_BASE + ordinal), so that code passing an
 * ordinal where cuDeviceGet's handle belongs fails here. ordinal_of is
 * the ordinal of a handle, or -1. */
#define DEVICE_BASE 0x100

static int ordinal_of(CUdevice d)
{
	int n = d - DEVICE_BASE;
	return n >= 0 && n < devices() ? n : -1;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	ENTER_INIT(cuDeviceGet);
	if (!d)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	if (ordinal < 0 || ordinal >= devices())
		return unlock(CUDA_ERROR_INVALID_DEVICE);
	*d = DEVICE_BASE + ordinal;
	return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	int n;
	ENTER_INIT(cuDeviceGetName);
	n = ordinal_of(d);
	if (!name || len <= 0)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	if (n < 0)
		return unlock(CUDA_ERROR_INVALID_DEVICE);
	snprintf(name, (size_t)len, "Fake CUDA Device %d", n);
	return unlock(CUDA_SUCCESS);
}

/* CUdevice_attribute numbers are cudaDeviceAttr's: 75, 76, 89. */
EXPORT CUresult cuDeviceGetAttribute(int *v, int attrib, CUdevice d)
{
	int n;
	ENTER_INIT(cuDeviceGetAttribute);
	n = ordinal_of(d);
	if (n < 0)
		return unlock(CUDA_ERROR_INVALID_DEVICE);
	return unlock(device_attribute(v, attrib, n));
}

/* ---- primary contexts ---- */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pc, CUdevice handle)
{
	int d;
	ENTER_INIT(cuDevicePrimaryCtxRetain);
	d = ordinal_of(handle);
	if (!pc)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	if (d < 0)
		return unlock(CUDA_ERROR_INVALID_DEVICE);
	pctxs[d].dev = d;
	pctxs[d].retains++;
	*pc = &pctxs[d];
	return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice handle)
{
	int d;
	ENTER_INIT(cuDevicePrimaryCtxRelease_v2);
	d = ordinal_of(handle);
	if (d < 0)
		return unlock(CUDA_ERROR_INVALID_DEVICE);
	if (pctxs[d].retains == 0)
		return unlock(CUDA_ERROR_INVALID_CONTEXT);
	pctxs[d].retains--;
	return unlock(CUDA_SUCCESS);
}

/* known_ctx: c is a primary context that exists. */
static int known_ctx(const struct pctx *c)
{
	int i;
	for (i = 0; i < devices(); i++)
		if (c == &pctxs[i])
			return ctx_held(c);
	return 0;
}

/* cuCtxSetCurrent also sets the thread's current device, so the runtime
 * calls that follow (fakecuda_mixed.c) work on that device, as they do on
 * the current context's device in CUDA. */
EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	ENTER_INIT(cuCtxSetCurrent);
	costs[COST_DEVICE_SWITCHES]++;
	if (!c) {
		set_current_ctx(NULL);
		return unlock(CUDA_SUCCESS);
	}
	if (!known_ctx(c))
		return unlock(CUDA_ERROR_INVALID_CONTEXT);
	set_current_ctx(c);
	cur_dev = c->dev;
	return unlock(CUDA_SUCCESS);
}

/* The thread's context stack below the current context (cuCtxPushCurrent
 * saves the current one here; cuCtxPopCurrent restores it). Entries of an
 * earlier generation (before fake_cuda_reset) restore no context. */
#define CTX_STACK 16
static __thread struct {
	struct pctx *ctx[CTX_STACK];
	long gen[CTX_STACK];
	int n;
} ctx_stack;

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	ENTER_INIT(cuCtxPushCurrent_v2);
	costs[COST_DEVICE_SWITCHES]++;
	if (!c || !known_ctx(c))
		return unlock(CUDA_ERROR_INVALID_CONTEXT);
	if (ctx_stack.n == CTX_STACK)
		return unlock(CUDA_ERROR_OUT_OF_MEMORY);
	ctx_stack.ctx[ctx_stack.n] = current_ctx();
	ctx_stack.gen[ctx_stack.n] = ctx_gen;
	ctx_stack.n++;
	set_current_ctx(c);
	cur_dev = c->dev;
	return unlock(CUDA_SUCCESS);
}

/* cuCtxPopCurrent fails where the thread has no current context, as the
 * driver does, and makes the context below it current again. */
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pc)
{
	struct pctx *c, *below = NULL;
	ENTER_INIT(cuCtxPopCurrent_v2);
	costs[COST_DEVICE_SWITCHES]++;
	c = current_ctx();
	if (!c)
		return unlock(CUDA_ERROR_INVALID_CONTEXT);
	if (ctx_stack.n > 0) {
		ctx_stack.n--;
		if (ctx_stack.gen[ctx_stack.n] == ctx_gen)
			below = ctx_stack.ctx[ctx_stack.n];
	}
	set_current_ctx(below);
	if (below)
		cur_dev = below->dev;
	if (pc)
		*pc = c;
	return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pc)
{
	ENTER_INIT(cuCtxGetCurrent);
	if (!pc)
		return unlock(CUDA_ERROR_INVALID_VALUE);
	*pc = current_ctx();
	return unlock(CUDA_SUCCESS);
}

/* ---- memory ---- */

EXPORT CUresult cuMemGetInfo_v2(size_t *free_, size_t *total)
{
	ENTER_DRV(cuMemGetInfo_v2);
	return unlock(mem_get_info(free_, total));
}

/* drv_alloc: the driver refuses a size of 0 where the runtime answers a
 * NULL pointer (cuMemAlloc, cuMemAllocManaged: CUDA_ERROR_INVALID_VALUE). */
static CUresult drv_alloc(CUdeviceptr *p, size_t n, int kind)
{
	void *q;
	CUresult rc;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = 0;
	if (n == 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = alloc(&q, n, kind);
	*p = (CUdeviceptr)q;
	return rc;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	ENTER_DRV(cuMemAlloc_v2);
	return unlock(drv_alloc(p, n, K_DEVICE));
}

/* cuMemAllocAsync: stream-ordered on a GPU; the double allocates at once,
 * on a live stream of the current device only. */
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	struct fstream *st;
	ENTER_DRV(cuMemAllocAsync);
	st = live_stream(s);
	if (!st || st->dev != cur_dev)
		return unlock(CUDA_ERROR_INVALID_HANDLE);
	return unlock(drv_alloc(p, n, K_DEVICE));
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	ENTER_DRV(cuMemFree_v2);
	return unlock(release((void *)p, 0));
}

EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	ENTER_DRV(cuMemAllocHost_v2);
	return unlock(alloc(p, n, K_HOST));
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	ENTER_DRV(cuMemFreeHost);
	return unlock(release(p, 1));
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
	ENTER_DRV(cuMemAllocManaged);
	if (!managed_flags(flags)) /* CU_MEM_ATTACH_GLOBAL 1, CU_MEM_ATTACH_HOST 2 */
		return unlock(CUDA_ERROR_INVALID_VALUE);
	return unlock(drv_alloc(p, n, K_MANAGED));
}

/* The copies are the runtime's with the kind each name implies, checked
 * the same way (HtoD: dst must be device-side memory...); the last kind is
 * what fake_cuda_last_memcpy_kind reports. */
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	ENTER_DRV(cuMemcpyHtoDAsync_v2);
	return unlock(drv(memcpy_async((void *)dst, src, n, HostToDevice, s)));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	ENTER_DRV(cuMemcpyDtoHAsync_v2);
	return unlock(drv(memcpy_async(dst, (const void *)src, n, DeviceToHost, s)));
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	ENTER_DRV(cuMemcpyDtoDAsync_v2);
	return unlock(drv(memcpy_async((void *)dst, (const void *)src, n, DeviceToDevice, s)));
}

/* cuMemcpyPeerAsync between the memory of two contexts; the double has
 * one address space, so it is a device-to-device copy on the source's
 * device, after both contexts are checked; it needs no current context. */
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
{
	int saved = cur_dev;
	CUresult rc;
	ENTER_INIT(cuMemcpyPeerAsync);
	if (!dc || !sc || !known_ctx(dc) || !known_ctx(sc))
		return unlock(CUDA_ERROR_INVALID_CONTEXT);
	if (dc->dev != sc->dev)
		return unlock(CUDA_ERROR_INVALID_VALUE); /* the double has no peer access */
	cur_dev = sc->dev;
	rc = drv(memcpy_async((void *)dst, (const void *)src, n, DeviceToDevice, s));
	cur_dev = saved;
	return unlock(rc);
}

/* cuMemcpyAsync infers the direction from unified addressing. */
EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	ENTER_DRV(cuMemcpyAsync);
	return unlock(drv(memcpy_async((void *)dst, (const void *)src, n, Default, s)));
}

/* cuMemcpyBatchAsync, CUDA 12.8's with failIdx, and CUDA 13's _v2 without;
 * a CUDA 13 driver exports both, and so does the double. */
EXPORT CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, struct memcpy_attrs *attrs,
				   size_t *attrs_idxs, size_t nattrs, size_t *fail, CUstream s)
{
	ENTER_DRV(cuMemcpyBatchAsync);
	return unlock(drv(memcpy_batch((void **)dsts, (void **)srcs, sizes, count, attrs, attrs_idxs, nattrs, fail, s)));
}

EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, struct memcpy_attrs *attrs,
				      size_t *attrs_idxs, size_t nattrs, CUstream s)
{
	ENTER_DRV(cuMemcpyBatchAsync_v2);
	return unlock(drv(memcpy_batch((void **)dsts, (void **)srcs, sizes, count, attrs, attrs_idxs, nattrs, NULL, s)));
}

/* ---- streams ---- */

/* CU_STREAM_DEFAULT 0, CU_STREAM_NON_BLOCKING 1: the runtime's flags. */
EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned flags)
{
	ENTER_DRV(cuStreamCreate);
	return unlock(stream_create(ps, flags));
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	ENTER_DRV(cuStreamSynchronize);
	return unlock(stream_synchronize(s));
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	ENTER_DRV(cuStreamDestroy_v2);
	return unlock(stream_destroy(s));
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
	ENTER_DRV(cuStreamWaitEvent);
	return unlock(stream_wait_event(s, e, flags));
}

/* ---- events ---- */

/* CU_EVENT_BLOCKING_SYNC 1, CU_EVENT_DISABLE_TIMING 2, CU_EVENT_INTERPROCESS
 * 4: the runtime's flags, with the same rule (4 needs 2). */
EXPORT CUresult cuEventCreate(CUevent *pe, unsigned flags)
{
	ENTER_DRV(cuEventCreate);
	return unlock(event_create(pe, flags));
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	ENTER_DRV(cuEventRecord);
	return unlock(event_record(e, s));
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	ENTER_DRV(cuEventSynchronize);
	return unlock(event_synchronize(e));
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	ENTER_DRV(cuEventQuery);
	return unlock(event_query(e));
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	ENTER_DRV(cuEventDestroy_v2);
	return unlock(event_destroy(e));
}
