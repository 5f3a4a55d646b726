/* dlpack.c: the C side of package dlpack's tests. It produces DLPack tensors
 * (DLManagedTensorVersioned and the legacy DLManagedTensor) on the CPU and on
 * an OpenCL device, with deleters whose calls are counted, and consumes the
 * tensors Go exports: it checks every field, reads the values (through
 * OpenCL for OpenCL tensors) and calls the deleter.
 *
 * The DLPack declarations are written here from dlpack.h 1.3's layout (the
 * header may be absent); libOpenCL is dlopen'ed through opencl_dl.h.
 *
 * Tensors are described by an int64_t parameter array (P_* indices), so
 * that the calls stay few-argument and the same on every architecture. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_dl.h"

/* ---- DLPack 1.3 ---- */
typedef struct {
	uint32_t major, minor;
} DLPackVersion;

typedef struct {
	int32_t device_type; /* DLDeviceType */
	int32_t device_id;
} DLDevice;

typedef struct {
	uint8_t code, bits;
	uint16_t lanes;
} DLDataType;

typedef struct {
	void *data;
	DLDevice device;
	int32_t ndim;
	DLDataType dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
	DLTensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct DLManagedTensorVersioned {
	DLPackVersion version;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensorVersioned *self);
	uint64_t flags;
	DLTensor dl_tensor;
} DLManagedTensorVersioned;

enum { kDLCPU = 1, kDLOpenCL = 4 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6 };

/* dl_cl_init loads the OpenCL library the Go side loaded: 0, or -1. */
int dl_cl_init(const char *lib) { return cl_load(lib); }

/* ---- parameters ---- */
enum {
	P_VERSIONED,   /* 1: DLManagedTensorVersioned, 0: legacy */
	P_SVM,         /* OpenCL: 1 SVM pointer, 0 cl_mem */
	P_DEVTYPE,     /* DLDeviceType */
	P_DEVID,       /* device_id */
	P_CODE,        /* dtype */
	P_BITS,
	P_LANES,
	P_NDIM,
	P_OFFSET,      /* byte_offset */
	P_FLAGS,       /* versioned flags (produce: set; consume: expected) */
	P_SEED,        /* values: see value() */
	P_HAS_STRIDES, /* produce: strides given (else NULL); consume: compare strides */
	P_MAJOR,       /* produce: version major (0: 1) */
	P_NO_DELETE,   /* consume: do not call the deleter */
	P_SHAPE = 16,  /* ndim values, then ndim strides at P_SHAPE + 8 */
	P_MAXDIM = 8,
	P_COUNT = P_SHAPE + 2 * P_MAXDIM,
};

/* value writes element i (logical row-major index) of a tensor of dtype
 * code/bits: seed+i for integers (wrapped), (seed+i)/2 for floats, and
 * (seed+i)%3==0 for bool. Float16 values are exact for |v| < 1024. */
static uint16_t half_of(float f) {
	union {
		float f;
		uint32_t u;
	} x = {f};
	uint32_t sign = (x.u >> 16) & 0x8000, e = (x.u >> 23) & 0xff, m = x.u & 0x7fffff;
	if (e == 0)
		return (uint16_t)sign;
	int he = (int)e - 127 + 15;
	if (he <= 0 || he >= 31)
		return (uint16_t)(sign | 0x7c00);
	return (uint16_t)(sign | (uint32_t)he << 10 | m >> 13);
}

static void value(void *dst, int code, int bits, int64_t seed, int64_t i) {
	int64_t v = seed + i;
	switch (code) {
	case kDLBool:
		*(uint8_t *)dst = v % 3 == 0;
		return;
	case kDLFloat:
		if (bits == 16)
			*(uint16_t *)dst = half_of((float)v / 2);
		else if (bits == 32)
			*(float *)dst = (float)v / 2;
		else
			*(double *)dst = (double)v / 2;
		return;
	}
	switch (bits) {
	case 8:
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case 16:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case 32:
		*(uint32_t *)dst = (uint32_t)v;
		break;
	default:
		*(uint64_t *)dst = (uint64_t)v;
	}
}

/* ---- producer ---- */
static int64_t deleter_calls, double_deletes, live;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

intptr_t dl_deleter_calls(void) { return __atomic_load_n(&deleter_calls, __ATOMIC_SEQ_CST); }
intptr_t dl_double_deletes(void) { return __atomic_load_n(&double_deletes, __ATOMIC_SEQ_CST); }
intptr_t dl_live(void) { return __atomic_load_n(&live, __ATOMIC_SEQ_CST); }

/* A holder is the memory behind one produced tensor. Holders are not freed
 * by the deleter (only their data is), so that a second deleter call is
 * seen and counted instead of touching freed memory; dl_collect frees the
 * deleted ones. */
struct holder {
	union {
		DLManagedTensorVersioned v;
		DLManagedTensor l;
	} t; /* first: the tensor's address is the holder's */
	int deleted, owns_data, free_self;
	int64_t shape[P_MAXDIM], strides[P_MAXDIM];
	unsigned char *host; /* CPU data */
	void *clbuf;         /* OpenCL buffer */
	int svm;
	cl_context ctx;
	struct holder *next;
};
static struct holder *holders;

static void delete_holder(struct holder *h) {
	__atomic_add_fetch(&deleter_calls, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&mu);
	if (h->deleted) {
		pthread_mutex_unlock(&mu);
		__atomic_add_fetch(&double_deletes, 1, __ATOMIC_SEQ_CST);
		return;
	}
	h->deleted = 1;
	pthread_mutex_unlock(&mu);
	if (h->owns_data)
		free(h->host);
	if (h->clbuf) {
		if (h->svm)
			cl.svmFree(h->ctx, h->clbuf);
		else
			cl.releaseMemObject(h->clbuf);
	}
	h->host = NULL;
	h->clbuf = NULL;
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	if (h->free_self)
		free(h);
}

static void deleter_v(DLManagedTensorVersioned *self) { delete_holder((struct holder *)self->manager_ctx); }
static void deleter_l(DLManagedTensor *self) { delete_holder((struct holder *)self->manager_ctx); }

/* dl_collect frees the holders of deleted tensors: a deleter call on one of
 * them after this is a use after free, as in any DLPack producer. */
void dl_collect(void) {
	pthread_mutex_lock(&mu);
	struct holder **p = &holders;
	while (*p) {
		struct holder *h = *p;
		if (h->deleted) {
			*p = h->next;
			free(h);
		} else
			p = &h->next;
	}
	pthread_mutex_unlock(&mu);
}

/* offsets: the element offset of logical index i, from shape and strides. */
static int64_t elem_offset(int ndim, const int64_t *shape, const int64_t *strides, int64_t i) {
	int64_t off = 0;
	for (int k = ndim - 1; k >= 0; k--) {
		if (shape[k] > 0) {
			off += (i % shape[k]) * strides[k];
			i /= shape[k];
		}
	}
	return off;
}

static void row_major(int ndim, const int64_t *shape, int64_t *strides) {
	int64_t n = 1;
	for (int k = ndim - 1; k >= 0; k--) {
		strides[k] = n;
		n *= shape[k] > 0 ? shape[k] : 1;
	}
}

static struct holder *new_holder(const int64_t *p) {
	int ndim = (int)p[P_NDIM];
	if (ndim < 0 || ndim > P_MAXDIM)
		return NULL;
	struct holder *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	for (int k = 0; k < ndim; k++) {
		h->shape[k] = p[P_SHAPE + k];
		h->strides[k] = p[P_SHAPE + P_MAXDIM + k];
	}
	DLTensor *t = p[P_VERSIONED] ? &h->t.v.dl_tensor : &h->t.l.dl_tensor;
	t->device.device_type = (int32_t)p[P_DEVTYPE];
	t->device.device_id = (int32_t)p[P_DEVID];
	t->ndim = ndim;
	t->dtype.code = (uint8_t)p[P_CODE];
	t->dtype.bits = (uint8_t)p[P_BITS];
	t->dtype.lanes = p[P_LANES] ? (uint16_t)p[P_LANES] : 1;
	t->shape = h->shape;
	t->strides = p[P_HAS_STRIDES] ? h->strides : NULL;
	t->byte_offset = (uint64_t)p[P_OFFSET];
	if (p[P_VERSIONED]) {
		h->t.v.version.major = p[P_MAJOR] ? (uint32_t)p[P_MAJOR] : 1;
		h->t.v.version.minor = 3;
		h->t.v.manager_ctx = h;
		h->t.v.deleter = deleter_v;
		h->t.v.flags = (uint64_t)p[P_FLAGS];
	} else {
		h->t.l.manager_ctx = h;
		h->t.l.deleter = deleter_l;
	}
	return h;
}

static void *publish(struct holder *h) {
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	if (h->free_self)
		return &h->t;
	pthread_mutex_lock(&mu);
	h->next = holders;
	holders = h;
	pthread_mutex_unlock(&mu);
	return &h->t;
}

/* dl_produce makes the tensor p describes, its element at logical index i
 * holding value(seed, i) at byte_offset + offset(i)*itemsize (offset from
 * the strides given, or row-major); other bytes are 0xEE. On the CPU when
 * ctx is NULL, else in a new OpenCL buffer (SVM or cl_mem, P_SVM) of ctx
 * written through q. Returns the DLManagedTensorVersioned* or
 * DLManagedTensor*, or NULL. */
void *dl_produce(const int64_t *p, cl_context ctx, cl_command_queue q) {
	struct holder *h = new_holder(p);
	if (!h)
		return NULL;
	int ndim = (int)p[P_NDIM], code = (int)p[P_CODE], bits = (int)p[P_BITS];
	size_t isz = (size_t)bits / 8;
	int64_t st[P_MAXDIM], n = 1, maxoff = 0;
	if (p[P_HAS_STRIDES])
		memcpy(st, h->strides, sizeof st);
	else
		row_major(ndim, h->shape, st);
	for (int k = 0; k < ndim; k++)
		n *= h->shape[k];
	for (int64_t i = 0; i < n; i++) {
		int64_t o = elem_offset(ndim, h->shape, st, i);
		if (o > maxoff)
			maxoff = o;
	}
	size_t size = (size_t)p[P_OFFSET] + (n ? (size_t)(maxoff + 1) * isz : 0);
	unsigned char *host = malloc(size ? size : 1);
	if (!host) {
		free(h);
		return NULL;
	}
	memset(host, 0xEE, size);
	for (int64_t i = 0; i < n; i++)
		value(host + p[P_OFFSET] + elem_offset(ndim, h->shape, st, i) * (int64_t)isz, code, bits, p[P_SEED], i);
	DLTensor *t = p[P_VERSIONED] ? &h->t.v.dl_tensor : &h->t.l.dl_tensor;
	if (!ctx || !n) { /* an empty tensor has NULL data, on any device */
		if (!n) {
			free(host);
			host = NULL;
		}
		h->host = host;
		h->owns_data = 1;
		t->data = n ? host : NULL;
		return publish(h);
	}
	cl_int err = CL_SUCCESS;
	h->ctx = ctx;
	h->svm = (int)p[P_SVM];
	if (h->svm) {
		h->clbuf = cl.svmAlloc(ctx, CL_MEM_READ_WRITE, size, 0);
		err = h->clbuf ? cl.enqueueSVMMemcpy(q, CL_TRUE, h->clbuf, host, size, 0, NULL, NULL) : -4;
	} else {
		h->clbuf = cl.createBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (err == CL_SUCCESS)
			err = cl.enqueueWriteBuffer(q, h->clbuf, CL_TRUE, 0, size, host, 0, NULL, NULL);
	}
	free(host);
	if (err != CL_SUCCESS) {
		if (h->clbuf)
			h->svm ? cl.svmFree(ctx, h->clbuf) : (void)cl.releaseMemObject(h->clbuf);
		free(h);
		return NULL;
	}
	t->data = h->clbuf;
	return publish(h);
}

/* dl_wrap makes a CPU tensor of p's description around data, which it does
 * not own: a producer that costs nothing per element (benchmarks). Its
 * deleter frees the holder too (no double-delete detection). */
void *dl_wrap(const int64_t *p, void *data) {
	struct holder *h = new_holder(p);
	if (!h)
		return NULL;
	h->free_self = 1;
	(p[P_VERSIONED] ? &h->t.v.dl_tensor : &h->t.l.dl_tensor)->data = data;
	return publish(h);
}

/* ---- consumer ---- */

/* dl_consume checks tensor t against p (device type and id, dtype, ndim,
 * shape, strides when P_HAS_STRIDES, byte_offset, flags and version for a
 * versioned tensor) and its values against expect (the elements in logical
 * row-major order), reading OpenCL memory through q. Then it calls the
 * deleter, unless P_NO_DELETE. Returns 0, or what differed first:
 * 1 version, 2 device, 3 dtype, 4 ndim, 5 shape, 6 strides, 7 byte_offset,
 * 8 flags, 9 values, 10 a read failed, 11 no deleter, 12 NULL data. */
int dl_consume(const int64_t *p, void *tensor, const void *expect, cl_command_queue q) {
	DLManagedTensorVersioned *v = p[P_VERSIONED] ? tensor : NULL;
	DLManagedTensor *l = p[P_VERSIONED] ? NULL : tensor;
	DLTensor *t = v ? &v->dl_tensor : &l->dl_tensor;
	int rc = 0, ndim = (int)p[P_NDIM];
	size_t isz = (size_t)p[P_BITS] / 8;
	int64_t st[P_MAXDIM], n = 1, maxoff = 0;
	if (v && (v->version.major != 1 || v->version.minor != 3))
		rc = 1;
	else if (t->device.device_type != p[P_DEVTYPE] || t->device.device_id != p[P_DEVID])
		rc = 2;
	else if (t->dtype.code != p[P_CODE] || t->dtype.bits != p[P_BITS] || t->dtype.lanes != 1)
		rc = 3;
	else if (t->ndim != ndim)
		rc = 4;
	if (rc)
		goto done;
	for (int k = 0; k < ndim; k++) {
		if (t->shape[k] != p[P_SHAPE + k])
			rc = 5;
		if (p[P_HAS_STRIDES] && (!t->strides || t->strides[k] != p[P_SHAPE + P_MAXDIM + k]))
			rc = rc ? rc : 6;
		n *= t->shape[k];
	}
	if (!rc && t->byte_offset != (uint64_t)p[P_OFFSET])
		rc = 7;
	if (!rc && v && v->flags != (uint64_t)p[P_FLAGS])
		rc = 8;
	if (!rc && n && !t->data)
		rc = 12;
	if (rc || !n)
		goto done;
	if (t->strides)
		memcpy(st, t->strides, sizeof(int64_t) * ndim);
	else
		row_major(ndim, t->shape, st);
	for (int64_t i = 0; i < n; i++) {
		int64_t o = elem_offset(ndim, t->shape, st, i);
		if (o > maxoff)
			maxoff = o;
	}
	size_t span = (size_t)(maxoff + 1) * isz;
	unsigned char *mem;
	if (t->device.device_type == kDLOpenCL) {
		mem = malloc(span);
		cl_int err = p[P_SVM] ? cl.enqueueSVMMemcpy(q, CL_TRUE, mem, (char *)t->data + t->byte_offset, span, 0,
							  NULL, NULL)
				      : cl.enqueueReadBuffer(q, t->data, CL_TRUE, t->byte_offset, span, mem, 0, NULL, NULL);
		if (err != CL_SUCCESS) {
			free(mem);
			rc = 10;
			goto done;
		}
	} else {
		mem = (unsigned char *)t->data + t->byte_offset; /* CPU, or host-accessible memory */
	}
	for (int64_t i = 0; i < n && !rc; i++)
		if (memcmp(mem + elem_offset(ndim, t->shape, st, i) * (int64_t)isz, (const char *)expect + i * (int64_t)isz,
			   isz) != 0)
			rc = 9;
	if (t->device.device_type == kDLOpenCL)
		free(mem);
done:
	if (!p[P_NO_DELETE]) {
		if (v ? !v->deleter : !l->deleter)
			return rc ? rc : 11;
		if (v)
			v->deleter(v);
		else
			l->deleter(l);
	}
	return rc;
}

/* dl_delete calls a tensor's deleter, as a consumer that is done does. */
void dl_delete(void *tensor, int versioned) {
	if (versioned)
		((DLManagedTensorVersioned *)tensor)->deleter(tensor);
	else
		((DLManagedTensor *)tensor)->deleter(tensor);
}

/* dl_fill_expected writes n elements value(seed, i) of dtype code/bits to
 * out, the same values dl_produce writes (for tests that compare). */
void dl_fill_expected(void *out, intptr_t code, intptr_t bits, intptr_t seed, intptr_t n) {
	for (int64_t i = 0; i < n; i++)
		value((char *)out + i * (bits / 8), (int)code, (int)bits, seed, i);
}
