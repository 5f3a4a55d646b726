/* The C side of the HIP device-stream tests: a producer and a consumer of
 * ArrowDeviceArrayStream on ROCm device memory through the HIP runtime the
 * Go side loaded (by its path: chipStar on PoCL in CI), with HIP events as
 * sync events, so that the other side of the boundary is not Go. The few
 * HIP functions are declared here; no ROCm header is needed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_abi.h"
#include "dl.h"

typedef void *hipStream_t;
typedef void *hipEvent_t;

static struct {
	int (*set_device)(int);
	int (*malloc_)(void **, size_t);
	int (*free_)(void *);
	int (*memcpy_async)(void *, const void *, size_t, int, hipStream_t);
	int (*stream_create)(hipStream_t *, unsigned);
	int (*stream_sync)(hipStream_t);
	int (*stream_destroy)(hipStream_t);
	int (*stream_wait)(hipStream_t, hipEvent_t, unsigned);
	int (*event_create)(hipEvent_t *, unsigned);
	int (*event_record)(hipEvent_t, hipStream_t);
	int (*event_destroy)(hipEvent_t);
} hip;

enum { H2D = 1, D2H = 2, NON_BLOCKING = 1, DISABLE_TIMING = 2 };

/* hip_peer_init loads the HIP library at lib: 0, or -1 if it or a function
 * is missing. */
int hip_peer_init(const char *lib) {
	void *h = dl_open(lib);
	if (!h)
		return -1;
#define BIND(f, name)                               \
	if (!(*(void **)&hip.f = dl_sym(h, name))) \
		return -1;
	BIND(set_device, "hipSetDevice");
	BIND(malloc_, "hipMalloc");
	BIND(free_, "hipFree");
	BIND(memcpy_async, "hipMemcpyAsync");
	BIND(stream_create, "hipStreamCreateWithFlags");
	BIND(stream_sync, "hipStreamSynchronize");
	BIND(stream_destroy, "hipStreamDestroy");
	BIND(stream_wait, "hipStreamWaitEvent");
	BIND(event_create, "hipEventCreateWithFlags");
	BIND(event_record, "hipEventRecord");
	BIND(event_destroy, "hipEventDestroy");
#undef BIND
	return 0;
}

/* One batch: n int32 values on the device, written by a copy queued on a
 * stream of the batch's own behind a large copy (so that the values arrive
 * late), the event recorded after them. */
struct produced {
	hipStream_t stream;
	hipEvent_t event; /* &event is the sync_event (hipEvent_t*) */
	void *buf, *ballast;
	int32_t *host;
	unsigned char *ballast_host;
};

enum { BALLAST = 16 << 20 };

static void produced_free(struct produced *p) {
	if (p->stream) {
		hip.stream_sync(p->stream);
		hip.stream_destroy(p->stream);
	}
	if (p->event)
		hip.event_destroy(p->event);
	if (p->buf)
		hip.free_(p->buf);
	if (p->ballast)
		hip.free_(p->ballast);
	free(p->host);
	free(p->ballast_host);
	free(p);
}

static struct produced *dsp_produce(void *cfg, int32_t n, int32_t seed, char *err, size_t errlen) {
	int dev = *(int *)cfg, rc;
	struct produced *p = calloc(1, sizeof *p);
	if (!p || !(p->host = malloc((size_t)n * 4)) || !(p->ballast_host = calloc(1, BALLAST))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int32_t i = 0; i < n; i++)
		p->host[i] = seed + i;
#define TRY(call)                                                     \
	if ((rc = (call)) != 0) {                                     \
		snprintf(err, errlen, "%s failed: HIP error %d", #call, rc); \
		goto fail;                                            \
	}
	TRY(hip.set_device(dev));
	TRY(hip.stream_create(&p->stream, NON_BLOCKING));
	TRY(hip.event_create(&p->event, DISABLE_TIMING));
	TRY(hip.malloc_(&p->buf, (size_t)n * 4));
	TRY(hip.malloc_(&p->ballast, BALLAST));
	TRY(hip.memcpy_async(p->ballast, p->ballast_host, BALLAST, H2D, p->stream));
	TRY(hip.memcpy_async(p->buf, p->host, (size_t)n * 4, H2D, p->stream));
	TRY(hip.event_record(p->event, p->stream));
#undef TRY
	return p;
fail:
	if (p)
		produced_free(p);
	return NULL;
}

static const void *dsp_buffer(struct produced *p) { return p->buf; }
static void *dsp_event(struct produced *p) { return &p->event; }
static void dsp_release(struct produced *p) { produced_free(p); }

#include "device_stream_peer.h"

/* hip_make_device_stream fills out with a stream of batches batches of
 * struct<v: int32 non-null> in the device memory of HIP device dev (rocm:dev),
 * batch b holding b*rows+i. 0, or -1 for bad arguments. */
int hip_make_device_stream(struct ArrowDeviceArrayStream *out, int dev, intptr_t batches, int32_t rows) {
	return dsp_make_stream(out, ARROW_DEVICE_ROCM, dev, batches, rows, &dev, sizeof dev);
}

/* hip_drain_device_stream reads every batch of s, a stream of struct<v:
 * int32> on ROCm, as a C consumer on a stream of its own: the stream waits
 * for the batch's sync_event (hipStreamWaitEvent), copies the values to the
 * host and checks that batch b holds b*rows+i. It releases every array and
 * the stream. The number of batches, or a negative step that failed:
 * -1 a stream call, -2 not ROCm, -3 the shape, -4 a HIP call, -5 a value. */
intptr_t hip_drain_device_stream(struct ArrowDeviceArrayStream *s, int32_t rows) {
	struct ArrowSchema schema;
	struct ArrowDeviceArray a;
	hipStream_t q = NULL;
	int32_t *host = malloc((size_t)rows * 4);
	intptr_t n = 0, rc = 0;
	if (!host)
		return -4;
	if (s->get_schema(s, &schema) != 0) {
		rc = -1;
		goto done;
	}
	schema.release(&schema);
	if (hip.set_device(0) != 0 || hip.stream_create(&q, NON_BLOCKING) != 0) {
		rc = -4;
		goto done;
	}
	for (;;) {
		if (s->get_next(s, &a) != 0) {
			rc = -1;
			break;
		}
		if (!a.array.release)
			break; /* the end */
		if (a.device_type != ARROW_DEVICE_ROCM) {
			rc = -2;
		} else if (a.array.length != rows || a.array.n_children != 1 || a.array.children[0]->length != rows ||
			   a.array.children[0]->n_buffers != 2) {
			rc = -3;
		} else {
			struct ArrowArray *c = a.array.children[0];
			const char *buf = (const char *)c->buffers[1] + (size_t)c->offset * 4;
			if ((a.sync_event && hip.stream_wait(q, *(hipEvent_t *)a.sync_event, 0) != 0) ||
			    hip.memcpy_async(host, buf, (size_t)rows * 4, D2H, q) != 0 || hip.stream_sync(q) != 0)
				rc = -4;
			for (int32_t i = 0; rc == 0 && i < rows; i++)
				if (host[i] != (int32_t)n * rows + i)
					rc = -5;
		}
		a.array.release(&a.array);
		if (rc != 0)
			break;
		n++;
	}
done:
	if (q)
		hip.stream_destroy(q);
	s->release(s);
	free(host);
	return rc != 0 ? rc : n;
}
