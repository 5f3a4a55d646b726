/*
 * nanoarrow_peer.c: Arrow's C reference implementation, nanoarrow, with its
 * CUDA backend (the driver API), on the other side of cdevice's CUDA device
 * arrays and device streams (device/cuda's TestRealNanoarrow). It is built
 * with nanoarrow's own sources, which the project does not carry
 * (../shared/nanoarrow, or $CDEVICE_NANOARROW), against CUDA's cuda.h (or
 * cudashim/cuda.h) and linked with libcuda (or the driver double).
 *
 * Both directions, on ARROW_DEVICE_CUDA and ARROW_DEVICE_CUDA_HOST:
 * - ours to nanoarrow: na_peer_import_array and na_peer_consume_stream take
 *   cdevice's device arrays, make the peer's stream wait on their
 *   sync_event, copy them to the CPU with ArrowDeviceArrayViewCopy, validate
 *   them at NANOARROW_VALIDATION_LEVEL_FULL (pinned host memory in place
 *   too), release them, and hand the CPU copies back for comparison;
 * - nanoarrow to ours: na_peer_export_array and na_peer_produce_stream copy
 *   CPU arrays the Go side exported onto the device, each with the
 *   sync_event nanoarrow records on the peer's stream.
 * Every array or stream the peer hands out is counted until released
 * (na_peer_live), and keeps the CPU source of its copies alive until then.
 * Calls return 0 or an errno code; na_peer_error says why.
 */
#include <cuda.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanoarrow/nanoarrow.h"
#include "nanoarrow/nanoarrow_device.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
	struct ArrowDevice *cuda, *host; /* nanoarrow's devices for the GPU */
	CUdevice cudev;
	CUcontext ctx; /* the GPU's primary context, retained for the stream */
	CUstream stream;
	long live; /* arrays and streams handed out, not yet released */
	char err[1024];
} p;

static int fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p.err, sizeof p.err, fmt, ap);
	va_end(ap);
	return code;
}

static int cuda_fail(CUresult rc, const char *call)
{
	const char *name = NULL;
	cuGetErrorName(rc, &name);
	return fail(EIO, "%s: %s (%d)", call, name ? name : "unknown", (int)rc);
}

EXPORT const char *na_peer_error(void) { return p.err; }
EXPORT long na_peer_live(void) { return p.live; }

static struct ArrowDevice *device_of(int32_t type)
{
	return type == ARROW_DEVICE_CUDA ? p.cuda : type == ARROW_DEVICE_CUDA_HOST ? p.host : NULL;
}

/* sync runs cuStreamSynchronize on the peer's stream in its context. */
static int sync_stream(void)
{
	CUcontext unused;
	CUresult rc = cuCtxPushCurrent(p.ctx);
	if (rc != CUDA_SUCCESS)
		return cuda_fail(rc, "cuCtxPushCurrent");
	rc = cuStreamSynchronize(p.stream);
	cuCtxPopCurrent(&unused);
	return rc == CUDA_SUCCESS ? 0 : cuda_fail(rc, "cuStreamSynchronize");
}

/* na_peer_open finds GPU id through nanoarrow (cuInit, every GPU's
 * primary context) and makes the peer's non-blocking stream on it. */
EXPORT int na_peer_open(int id)
{
	CUcontext unused;
	CUresult rc;
	if (p.stream)
		return fail(EBUSY, "already open");
	p.cuda = ArrowDeviceCuda(ARROW_DEVICE_CUDA, id);
	p.host = ArrowDeviceCuda(ARROW_DEVICE_CUDA_HOST, id);
	if (!p.cuda || !p.host)
		return fail(ENODEV, "nanoarrow finds no CUDA device %d", id);
	if ((rc = cuDeviceGet(&p.cudev, id)) != CUDA_SUCCESS)
		return cuda_fail(rc, "cuDeviceGet");
	if ((rc = cuDevicePrimaryCtxRetain(&p.ctx, p.cudev)) != CUDA_SUCCESS)
		return cuda_fail(rc, "cuDevicePrimaryCtxRetain");
	if ((rc = cuCtxPushCurrent(p.ctx)) != CUDA_SUCCESS) {
		cuDevicePrimaryCtxRelease(p.cudev);
		return cuda_fail(rc, "cuCtxPushCurrent");
	}
	rc = cuStreamCreate(&p.stream, CU_STREAM_NON_BLOCKING);
	cuCtxPopCurrent(&unused);
	if (rc != CUDA_SUCCESS) {
		cuDevicePrimaryCtxRelease(p.cudev);
		return cuda_fail(rc, "cuStreamCreate");
	}
	return 0;
}

/* na_peer_close destroys the stream and releases the context the peer
 * retained (nanoarrow keeps its own devices for the life of the process). */
EXPORT int na_peer_close(void)
{
	CUcontext unused;
	CUresult rc;
	if (!p.stream)
		return 0;
	if ((rc = cuCtxPushCurrent(p.ctx)) != CUDA_SUCCESS)
		return cuda_fail(rc, "cuCtxPushCurrent");
	rc = cuStreamDestroy(p.stream);
	cuCtxPopCurrent(&unused);
	p.stream = NULL;
	if (rc != CUDA_SUCCESS)
		return cuda_fail(rc, "cuStreamDestroy");
	if ((rc = cuDevicePrimaryCtxRelease(p.cudev)) != CUDA_SUCCESS)
		return cuda_fail(rc, "cuDevicePrimaryCtxRelease");
	return 0;
}

/* validate checks a host-readable array against its schema, contents and
 * all (NANOARROW_VALIDATION_LEVEL_FULL). */
static int validate(const struct ArrowSchema *schema, const struct ArrowArray *array, const char *what)
{
	struct ArrowArrayView v;
	struct ArrowError e;
	int rc;
	e.message[0] = 0;
	if ((rc = ArrowArrayViewInitFromSchema(&v, schema, &e)) != 0)
		return fail(rc, "%s: schema: %s", what, e.message);
	if ((rc = ArrowArrayViewSetArray(&v, array, &e)) == 0)
		rc = ArrowArrayViewValidate(&v, NANOARROW_VALIDATION_LEVEL_FULL, &e);
	ArrowArrayViewReset(&v);
	return rc ? fail(rc, "%s: %s", what, e.message) : 0;
}

/* A held array is one the peer handed out: its release runs nanoarrow's,
 * then lets go of what the copies read (the CPU source), once the peer's
 * stream is past them. */
struct held {
	struct ArrowArray inner;
	struct ArrowArray source; /* release NULL: none */
};

static void held_release(struct ArrowArray *a)
{
	struct held *h = a->private_data;
	if (h->source.release) {
		sync_stream();
		h->source.release(&h->source);
	}
	h->inner.release(&h->inner);
	free(h);
	a->release = NULL;
	p.live--;
}

/* hold makes *a a held array owning *source (moved from, may be NULL). */
static int hold(struct ArrowArray *a, struct ArrowArray *source)
{
	struct held *h = calloc(1, sizeof *h);
	if (!h)
		return fail(ENOMEM, "out of memory");
	h->inner = *a;
	if (source)
		ArrowArrayMove(source, &h->source);
	a->private_data = h;
	a->release = held_release;
	p.live++;
	return 0;
}

/* uncopyable says why nanoarrow's ArrowDeviceArrayViewCopy cannot copy
 * the array v views, or NULL: it copies the fixed buffers of each node
 * only (the variadic buffers of string_view and binary_view data would be
 * lost), and copies a buffer of a size it left unknown (-1: the sizes
 * buffer of a list view) as (size_t)-1 bytes. */
static const char *uncopyable(const struct ArrowArrayView *v)
{
	const char *why = NULL;
	int64_t i;
	if (v->n_variadic_buffers > 0)
		return "it does not copy variadic buffers (string_view, binary_view)";
	for (i = 0; i < NANOARROW_MAX_FIXED_BUFFERS; i++)
		if (v->layout.buffer_type[i] != NANOARROW_BUFFER_TYPE_NONE && v->buffer_views[i].size_bytes < 0)
			return "nanoarrow leaves a buffer's size unknown (a list view's sizes)";
	for (i = 0; i < v->n_children && !why; i++)
		why = uncopyable(v->children[i]);
	if (!why && v->dictionary)
		why = uncopyable(v->dictionary);
	return why;
}

/* refuse_uncopyable fails with ENOTSUP where nanoarrow cannot copy v. */
static int refuse_uncopyable(const struct ArrowArrayView *v)
{
	const char *why = uncopyable(v);
	return why ? fail(ENOTSUP, "nanoarrow's ArrowDeviceArrayViewCopy cannot copy this array: %s", why) : 0;
}

/* to_cpu takes one of our device arrays (moved from in): the stream waits
 * on its sync_event (nanoarrow's copy waits only when it reads string
 * offsets first), pinned host memory is validated in place, the array is
 * copied to the CPU and released, and the copy, validated, is moved to out. */
static int to_cpu(const struct ArrowSchema *schema, struct ArrowDeviceArray *in, int32_t want_type, struct ArrowArray *out)
{
	struct ArrowDeviceArray dev, cpu;
	struct ArrowDeviceArrayView view;
	struct ArrowError e;
	int rc;
	ArrowDeviceArrayMove(in, &dev);
	memset(&cpu, 0, sizeof cpu);
	e.message[0] = 0;
	ArrowDeviceArrayViewInit(&view);
	if (dev.device_type != want_type) {
		rc = fail(EINVAL, "device_type %d, want %d", (int)dev.device_type, (int)want_type);
		goto done;
	}
	if ((rc = ArrowArrayViewInitFromSchema(&view.array_view, schema, &e)) != 0 ||
	    (rc = ArrowDeviceArrayViewSetArrayAsync(&view, &dev, &p.stream, &e)) != 0 ||
	    (rc = view.device->synchronize_event(view.device, view.sync_event, &p.stream, &e)) != 0) {
		rc = fail(rc, "viewing the device array: %s", e.message);
		goto done;
	}
	if ((rc = refuse_uncopyable(&view.array_view)) != 0)
		goto done;
	if (dev.device_type == ARROW_DEVICE_CUDA_HOST) {
		if ((rc = sync_stream()) != 0)
			goto done;
		if ((rc = ArrowArrayViewValidate(&view.array_view, NANOARROW_VALIDATION_LEVEL_FULL, &e)) != 0) {
			rc = fail(rc, "pinned host memory in place: %s", e.message);
			goto done;
		}
	}
	if ((rc = ArrowDeviceArrayViewCopyAsync(&view, ArrowDeviceCpu(), &cpu, &p.stream)) != 0) {
		rc = fail(rc, "ArrowDeviceArrayViewCopy to the CPU: %s", strerror(rc));
		goto done;
	}
	if ((rc = validate(schema, &cpu.array, "the CPU copy")) != 0)
		goto done;
	ArrowArrayMove(&cpu.array, out);
	rc = hold(out, NULL);
done:
	ArrowDeviceArrayViewReset(&view);
	if (cpu.array.release)
		cpu.array.release(&cpu.array);
	if (dev.array.release)
		dev.array.release(&dev.array);
	return rc;
}

/* to_device copies a CPU array the Go side exported (moved from in) onto
 * the device with nanoarrow; out gets the device array, whose sync_event
 * nanoarrow recorded on the peer's stream after the copies. */
static int to_device(const struct ArrowSchema *schema, struct ArrowArray *in, struct ArrowDevice *dev,
		     struct ArrowDeviceArray *out)
{
	struct ArrowArray src;
	struct ArrowDeviceArray cpu;
	struct ArrowDeviceArrayView view;
	struct ArrowError e;
	int rc;
	ArrowArrayMove(in, &src);
	memset(out, 0, sizeof *out);
	e.message[0] = 0;
	if ((rc = validate(schema, &src, "the Go export")) != 0) {
		src.release(&src);
		return rc;
	}
	/* The CPU device array only views src: src stays the source's owner. */
	memset(&cpu, 0, sizeof cpu);
	cpu.array = src;
	cpu.device_type = ARROW_DEVICE_CPU;
	cpu.device_id = -1;
	ArrowDeviceArrayViewInit(&view);
	if ((rc = ArrowArrayViewInitFromSchema(&view.array_view, schema, &e)) != 0 ||
	    (rc = ArrowDeviceArrayViewSetArray(&view, &cpu, &e)) != 0)
		rc = fail(rc, "viewing the Go export: %s", e.message);
	else if ((rc = refuse_uncopyable(&view.array_view)) != 0)
		;
	else if ((rc = ArrowDeviceArrayViewCopyAsync(&view, dev, out, &p.stream)) != 0)
		rc = fail(rc, "ArrowDeviceArrayViewCopy to device type %d: %s", (int)dev->device_type, strerror(rc));
	else if (!out->sync_event)
		rc = fail(EINVAL, "nanoarrow made no sync_event");
	else
		rc = hold(&out->array, &src);
	ArrowDeviceArrayViewReset(&view);
	if (rc && out->array.release)
		out->array.release(&out->array);
	if (src.release)
		src.release(&src);
	return rc;
}

EXPORT int na_peer_import_array(struct ArrowSchema *schema, struct ArrowDeviceArray *in, struct ArrowArray *out)
{
	return to_cpu(schema, in, in->device_type, out);
}

EXPORT int na_peer_export_array(struct ArrowSchema *schema, struct ArrowArray *in, int32_t type,
				struct ArrowDeviceArray *out)
{
	struct ArrowDevice *dev = device_of(type);
	if (!dev) {
		in->release(in);
		return fail(EINVAL, "device type %d", (int)type);
	}
	return to_device(schema, in, dev, out);
}

/* A counted stream is a CPU stream the peer handed out. */
static void (*basic_release)(struct ArrowArrayStream *);

static void counted_stream_release(struct ArrowArrayStream *s)
{
	basic_release(s);
	p.live--;
}

/* na_peer_consume_stream reads every batch of our device stream (moved
 * from in, released at the end) as na_peer_import_array does, checks that
 * each is on the stream's device type, and hands the CPU copies back as a
 * stream in out. */
EXPORT int na_peer_consume_stream(struct ArrowDeviceArrayStream *in, struct ArrowArrayStream *out)
{
	struct ArrowDeviceArrayStream s = *in;
	struct ArrowSchema schema;
	struct ArrowArray *got = NULL;
	struct ArrowError e;
	int64_t n = 0, cap = 0, i;
	int rc;
	in->release = NULL;
	schema.release = NULL;
	memset(out, 0, sizeof *out);
	if ((rc = s.get_schema(&s, &schema)) != 0) {
		const char *m = s.get_last_error(&s);
		rc = fail(rc, "get_schema: %s", m ? m : "(no message)");
		goto done;
	}
	for (;;) {
		struct ArrowDeviceArray a;
		memset(&a, 0, sizeof a);
		if ((rc = s.get_next(&s, &a)) != 0) {
			const char *m = s.get_last_error(&s);
			rc = fail(rc, "get_next: %s", m ? m : "(no message)");
			goto done;
		}
		if (!a.array.release)
			break;
		if (n == cap) {
			struct ArrowArray *g = realloc(got, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *got);
			if (!g) {
				a.array.release(&a.array);
				rc = fail(ENOMEM, "out of memory");
				goto done;
			}
			got = g;
		}
		if ((rc = to_cpu(&schema, &a, s.device_type, &got[n])) != 0)
			goto done;
		n++;
	}
	if ((rc = ArrowBasicArrayStreamInit(out, &schema, n)) != 0) {
		rc = fail(rc, "ArrowBasicArrayStreamInit");
		goto done;
	}
	for (i = 0; i < n; i++)
		ArrowBasicArrayStreamSetArray(out, i, &got[i]);
	n = 0;
	e.message[0] = 0;
	if ((rc = ArrowBasicArrayStreamValidate(out, &e)) != 0) {
		out->release(out);
		rc = fail(rc, "ArrowBasicArrayStreamValidate: %s", e.message);
		goto done;
	}
	basic_release = out->release;
	out->release = counted_stream_release;
	p.live++;
done:
	for (i = 0; i < n; i++)
		got[i].release(&got[i]);
	free(got);
	if (schema.release)
		schema.release(&schema);
	if (s.release)
		s.release(&s);
	return rc;
}

/* na_peer_bench_import is nanoarrow's import of n batches of our device
 * stream (moved from in, released at the end), the anchor of the Go
 * import's benchmark (BenchmarkDeviceStreamModel): one device array view
 * made from the schema, then for each batch what a nanoarrow consumer does
 * to learn its buffers' sizes, ArrowDeviceArrayViewSetArrayAsync on the
 * peer's stream (the stream made to wait on the batch's sync_event, the
 * last offset of every string array copied into host memory), and its
 * release. */
EXPORT int na_peer_bench_import(struct ArrowDeviceArrayStream *in, int64_t n)
{
	struct ArrowDeviceArrayStream s = *in;
	struct ArrowSchema schema;
	struct ArrowDeviceArrayView view;
	struct ArrowError e;
	int64_t i;
	int rc;
	in->release = NULL;
	schema.release = NULL;
	e.message[0] = 0;
	ArrowDeviceArrayViewInit(&view);
	if ((rc = s.get_schema(&s, &schema)) != 0) {
		rc = fail(rc, "get_schema");
		goto done;
	}
	if ((rc = ArrowArrayViewInitFromSchema(&view.array_view, &schema, &e)) != 0) {
		rc = fail(rc, "ArrowArrayViewInitFromSchema: %s", e.message);
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct ArrowDeviceArray a;
		memset(&a, 0, sizeof a);
		if ((rc = s.get_next(&s, &a)) != 0 || !a.array.release) {
			rc = fail(rc ? rc : EINVAL, "get_next of batch %lld", (long long)i);
			goto done;
		}
		rc = ArrowDeviceArrayViewSetArrayAsync(&view, &a, &p.stream, &e);
		a.array.release(&a.array);
		if (rc != 0) {
			rc = fail(rc, "ArrowDeviceArrayViewSetArrayAsync: %s", e.message);
			goto done;
		}
	}
done:
	ArrowDeviceArrayViewReset(&view);
	if (schema.release)
		schema.release(&schema);
	if (s.release)
		s.release(&s);
	return rc;
}

/* A producer is the device stream na_peer_produce_stream hands out: each
 * get_next reads the next batch of the Go side's CPU stream and copies it
 * onto the device, so every sync_event is live when it is handed over. */
struct producer {
	struct ArrowArrayStream src;
	struct ArrowSchema schema;
	struct ArrowDevice *dev;
	char err[1024];
};

static int producer_get_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out)
{
	struct producer *pr = s->private_data;
	int rc = ArrowSchemaDeepCopy(&pr->schema, out);
	if (rc)
		snprintf(pr->err, sizeof pr->err, "ArrowSchemaDeepCopy: %s", strerror(rc));
	return rc;
}

static int producer_get_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out)
{
	struct producer *pr = s->private_data;
	struct ArrowArray a;
	int rc;
	memset(out, 0, sizeof *out);
	if ((rc = pr->src.get_next(&pr->src, &a)) != 0) {
		const char *m = pr->src.get_last_error(&pr->src);
		snprintf(pr->err, sizeof pr->err, "the Go stream: %s", m ? m : "(no message)");
		return rc;
	}
	if (!a.release) {
		out->device_type = pr->dev->device_type;
		return 0;
	}
	if ((rc = to_device(&pr->schema, &a, pr->dev, out)) != 0)
		snprintf(pr->err, sizeof pr->err, "%s", p.err);
	return rc;
}

static const char *producer_get_last_error(struct ArrowDeviceArrayStream *s)
{
	struct producer *pr = s->private_data;
	return pr->err[0] ? pr->err : NULL;
}

static void producer_release(struct ArrowDeviceArrayStream *s)
{
	struct producer *pr = s->private_data;
	pr->src.release(&pr->src);
	pr->schema.release(&pr->schema);
	free(pr);
	s->release = NULL;
	p.live--;
}

/* na_peer_produce_stream makes out a device stream on device type type of
 * the batches of the Go side's CPU stream in (moved from). */
EXPORT int na_peer_produce_stream(struct ArrowArrayStream *in, int32_t type, struct ArrowDeviceArrayStream *out)
{
	struct producer *pr;
	struct ArrowDevice *dev = device_of(type);
	int rc;
	memset(out, 0, sizeof *out);
	if (!dev) {
		in->release(in);
		return fail(EINVAL, "device type %d", (int)type);
	}
	if (!(pr = calloc(1, sizeof *pr))) {
		in->release(in);
		return fail(ENOMEM, "out of memory");
	}
	ArrowArrayStreamMove(in, &pr->src);
	pr->dev = dev;
	if ((rc = pr->src.get_schema(&pr->src, &pr->schema)) != 0) {
		const char *m = pr->src.get_last_error(&pr->src);
		rc = fail(rc, "get_schema of the Go stream: %s", m ? m : "(no message)");
		pr->src.release(&pr->src);
		free(pr);
		return rc;
	}
	out->device_type = dev->device_type;
	out->get_schema = producer_get_schema;
	out->get_next = producer_get_next;
	out->get_last_error = producer_get_last_error;
	out->release = producer_release;
	out->private_data = pr;
	p.live++;
	return 0;
}
