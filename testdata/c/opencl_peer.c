/* The C side of the OpenCL tests: produces and consumes OpenCL device buffers
 * with sync events, on the context and queue the Go side hands over, so that
 * the other side of the boundary is not Go. libOpenCL is dlopen'ed and its
 * few prototypes declared by opencl_dl.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opencl_dl.h"

/* peer_init loads the OpenCL library the Go side loaded: 0, or -1 if the
 * library or a symbol is missing. */
int peer_init(const char *lib) { return cl_load(lib); }

/* A produced buffer: n int32 values seed, seed+1, ... written behind a gate
 * (a user event), then a marker whose cl_event is the sync event. Until the
 * gate opens the data is not there, so a consumer that does not wait on the
 * event reads garbage. */
struct produced {
	void *buf;       /* SVM pointer or cl_mem */
	cl_event marker; /* &marker is the sync_event (cl_event*) */
	cl_event gate;
	cl_event failed; /* see peer_fail_event */
	int32_t *host;
	int svm;
	cl_context ctx;
	pthread_t opener;
	int opener_started;
	int delay_ms;
};

/* peer_produce returns a struct produced* (NULL on failure, *err set). */
struct produced *peer_produce(cl_context ctx, cl_command_queue q, int svm, int32_t n, int32_t seed, cl_int *err) {
	struct produced *p = calloc(1, sizeof *p);
	size_t size = (size_t)n * sizeof(int32_t);
	p->svm = svm;
	p->ctx = ctx;
	p->host = malloc(size);
	for (int32_t i = 0; i < n; i++)
		p->host[i] = seed + i;
	if (svm) {
		p->buf = cl.svmAlloc(ctx, CL_MEM_READ_WRITE, size, 0);
		*err = p->buf ? CL_SUCCESS : -4;
	} else {
		p->buf = cl.createBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, err);
	}
	if (*err != CL_SUCCESS)
		goto fail;
	p->gate = cl.createUserEvent(ctx, err);
	if (*err != CL_SUCCESS)
		goto fail;
	if (svm)
		*err = cl.enqueueSVMMemcpy(q, CL_FALSE, p->buf, p->host, size, 1, &p->gate, NULL);
	else
		*err = cl.enqueueWriteBuffer(q, p->buf, CL_FALSE, 0, size, p->host, 1, &p->gate, NULL);
	if (*err != CL_SUCCESS)
		goto fail;
	if ((*err = cl.enqueueMarkerWithWaitList(q, 0, NULL, &p->marker)) != CL_SUCCESS)
		goto fail;
	*err = cl.flush(q);
	return p;
fail:
	free(p->host);
	free(p);
	return NULL;
}

void *peer_produced_buffer(struct produced *p) { return p->buf; }
cl_event *peer_produced_event(struct produced *p) { return &p->marker; }

/* peer_event_complete: 1 when the marker has completed, 0 if not, <0 error. */
int peer_event_complete(struct produced *p) {
	cl_int status = -1;
	cl_int err = cl.getEventInfo(p->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
	return err != CL_SUCCESS ? err : status == CL_COMPLETE;
}

/* peer_open_gate completes the gate. It holds its own reference on the gate
 * for the call: clSetUserEventStatus completes the commands behind the gate,
 * so the marker, before it returns (PoCL 3.1 locks the event again after
 * pocl_broadcast), and a consumer on another thread that waited on the
 * marker may meanwhile release the array, so the gate (peer_release); were
 * that the last reference, PoCL would lock a destroyed mutex and abort
 * ("PTHREAD ERROR in POclSetUserEventStatus(): Invalid argument"). */
int peer_open_gate(struct produced *p) {
	cl_event gate = p->gate; /* p may be freed during the call */
	cl_int err = cl.retainEvent(gate);
	if (err != CL_SUCCESS)
		return err;
	err = cl.setUserEventStatus(gate, CL_COMPLETE);
	cl.releaseEvent(gate);
	return err;
}

static void *opener(void *arg) {
	struct produced *p = arg;
	usleep((useconds_t)p->delay_ms * 1000);
	peer_open_gate(p); /* peer_release joins this thread before freeing p */
	return NULL;
}

/* peer_open_gate_after opens the gate from another thread after ms. */
int peer_open_gate_after(struct produced *p, int ms) {
	p->delay_ms = ms;
	if (pthread_create(&p->opener, NULL, opener, p) != 0)
		return -1;
	p->opener_started = 1;
	return 0;
}

/* peer_release waits for everything and frees what peer_produce made. */
int peer_release(struct produced *p) {
	if (p->opener_started)
		pthread_join(p->opener, NULL);
	cl_int err = cl.waitForEvents(1, &p->marker);
	cl.releaseEvent(p->marker);
	cl.releaseEvent(p->gate);
	if (p->failed)
		cl.releaseEvent(p->failed);
	if (p->svm)
		cl.svmFree(p->ctx, p->buf);
	else
		cl.releaseMemObject(p->buf);
	free(p->host);
	free(p);
	return err;
}

/* peer_consume reads n int32 from buf+off bytes on q after waiting on
 * *wait (a sync event; NULL or *wait NULL: none) and checks that they are
 * seed, seed+1, ...: returns the number of mismatches, or a CL error (<0). */
int peer_consume(cl_command_queue q, void *buf, int svm, size_t off, int32_t n, int32_t seed, const cl_event *wait) {
	size_t size = (size_t)n * sizeof(int32_t);
	int32_t *host = malloc(size);
	cl_uint nwait = wait && *wait ? 1 : 0;
	cl_int err;
	memset(host, 0xff, size);
	if (svm)
		err = cl.enqueueSVMMemcpy(q, CL_TRUE, host, (char *)buf + off, size, nwait, nwait ? wait : NULL, NULL);
	else
		err = cl.enqueueReadBuffer(q, buf, CL_TRUE, off, size, host, nwait, nwait ? wait : NULL, NULL);
	if (err != CL_SUCCESS) {
		free(host);
		return err;
	}
	int bad = 0;
	for (int32_t i = 0; i < n; i++)
		if (host[i] != seed + i)
			bad++;
	free(host);
	return bad;
}

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct bench {
	cl_context ctx;
	cl_command_queue q;
	int svm;
	size_t size;
	char *host;
	void *buf;
};

/* peer_bench_new makes a device buffer and a host buffer of size bytes, the
 * host pages faulted in and the device buffer written: NULL on failure. */
struct bench *peer_bench_new(cl_context ctx, cl_command_queue q, int svm, size_t size) {
	struct bench *b = calloc(1, sizeof *b);
	cl_int err = CL_SUCCESS;
	b->ctx = ctx;
	b->q = q;
	b->svm = svm;
	b->size = size;
	b->host = malloc(size);
	memset(b->host, 7, size);
	if (svm)
		b->buf = cl.svmAlloc(ctx, CL_MEM_READ_WRITE, size, 0);
	else
		b->buf = cl.createBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
	if (b->buf && err == CL_SUCCESS) /* fill the device buffer: reading never-written memory reads zero pages */
		err = svm ? cl.enqueueSVMMemcpy(q, CL_TRUE, b->buf, b->host, size, 0, NULL, NULL)
			  : cl.enqueueWriteBuffer(q, b->buf, CL_TRUE, 0, size, b->host, 0, NULL, NULL);
	if (!b->buf || err != CL_SUCCESS) {
		free(b->host);
		free(b);
		return NULL;
	}
	return b;
}

/* peer_bench_run times iters copies (read: device to host, else host to
 * device), each a non-blocking enqueue plus clFinish as in the Go benchmark,
 * with clEnqueueWrite/ReadBuffer (cl_mem) or clEnqueueSVMMemcpy (SVM).
 * Returns the nanoseconds taken, or a CL error (<0). */
intptr_t peer_bench_run(struct bench *b, int read, int iters) {
	cl_int err = CL_SUCCESS;
	int64_t t0 = now_ns();
	for (int i = 0; i < iters && err == CL_SUCCESS; i++) {
		if (b->svm)
			err = read ? cl.enqueueSVMMemcpy(b->q, CL_FALSE, b->host, b->buf, b->size, 0, NULL, NULL)
				   : cl.enqueueSVMMemcpy(b->q, CL_FALSE, b->buf, b->host, b->size, 0, NULL, NULL);
		else if (read)
			err = cl.enqueueReadBuffer(b->q, b->buf, CL_FALSE, 0, b->size, b->host, 0, NULL, NULL);
		else
			err = cl.enqueueWriteBuffer(b->q, b->buf, CL_FALSE, 0, b->size, b->host, 0, NULL, NULL);
		if (err == CL_SUCCESS)
			err = cl.finish(b->q);
	}
	int64_t t = now_ns() - t0;
	return err != CL_SUCCESS ? err : t;
}

void peer_bench_free(struct bench *b) {
	if (b->svm)
		cl.svmFree(b->ctx, b->buf);
	else
		cl.releaseMemObject(b->buf);
	free(b->host);
	free(b);
}

/* ---- ArrowDeviceArray on OpenCL, through the C Device Data Interface ---- */
#include "arrow_c_abi.h"

struct arrow_produced {
	struct produced *p;
	const void *buffers[2];
};

static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

static void release_array(struct ArrowArray *a) {
	struct arrow_produced *ap = a->private_data;
	peer_release(ap->p);
	free(ap);
	a->release = NULL;
}

/* peer_arrow_produce wraps p (n int32 values, written behind its gate) as an
 * int32 ArrowDeviceArray on opencl:device_id whose sync_event is p's marker:
 * a consumer that reads before waiting on it reads garbage. */
int peer_arrow_produce(struct produced *p, int32_t n, intptr_t device_id, struct ArrowSchema *s,
		       struct ArrowDeviceArray *out) {
	struct arrow_produced *ap = calloc(1, sizeof *ap);
	if (!ap)
		return -1;
	ap->p = p;
	ap->buffers[0] = NULL;
	ap->buffers[1] = p->buf;
	memset(s, 0, sizeof *s);
	s->format = "i";
	s->name = "";
	s->flags = ARROW_FLAG_NULLABLE;
	s->release = release_schema;
	memset(out, 0, sizeof *out);
	out->array.length = n;
	out->array.n_buffers = 2;
	out->array.buffers = ap->buffers;
	out->array.release = release_array;
	out->array.private_data = ap;
	out->device_id = device_id;
	out->device_type = ARROW_DEVICE_OPENCL;
	out->sync_event = &p->marker;
	return 0;
}

/* peer_fail_event makes the sync event of out, p's ArrowDeviceArray, a user
 * event that ended in error (status -1), as a producer's failed command
 * leaves its event; the data itself is written (the gate opens). (Failing
 * the gate instead would fail the commands behind it, which aborts PoCL 3.1
 * in pocl_update_event_failed.) 0, or a CL error. */
int peer_fail_event(struct produced *p, struct ArrowDeviceArray *out) {
	cl_int err;
	p->failed = cl.createUserEvent(p->ctx, &err);
	if (err != CL_SUCCESS)
		return err;
	if ((err = cl.setUserEventStatus(p->failed, -1)) != CL_SUCCESS)
		return err;
	out->sync_event = &p->failed;
	return peer_open_gate(p);
}

/* peer_arrow_consume checks an int32 ArrowDeviceArray on OpenCL made by Go:
 * it reads the values on q after waiting on sync_event and compares them with
 * seed, seed+1, ... It releases both structs and returns the number of
 * mismatches, a CL error (<0), or 1000+ for a malformed struct. */
int peer_arrow_consume(cl_command_queue q, int svm, struct ArrowSchema *s, struct ArrowDeviceArray *in,
		       int32_t seed) {
	int rc = 0;
	if (strcmp(s->format, "i") != 0 || in->device_type != ARROW_DEVICE_OPENCL || in->array.n_buffers != 2 ||
	    in->array.null_count != 0 || in->sync_event == NULL)
		rc = 1000;
	else
		rc = peer_consume(q, (void *)in->array.buffers[1], svm, (size_t)in->array.offset * sizeof(int32_t),
				  (int32_t)in->array.length, seed, (const cl_event *)in->sync_event);
	in->array.release(&in->array);
	s->release(s);
	if (in->array.release != NULL || s->release != NULL)
		rc = 1001;
	return rc;
}

/* ---- ArrowDeviceArrayStream on OpenCL ----------------------------------- */

/* What a stream's batches are made with. */
struct cl_stream_cfg {
	cl_context ctx;
	cl_command_queue q;
	int svm;
};

/* Batch b holds rows int32 values b*rows, b*rows+1, ... written behind a gate
 * that another thread opens a little later, so a consumer must wait on the
 * batch's sync_event (its own marker cl_event) to read them. */
static struct produced *dsp_produce(void *cfg, int32_t n, int32_t seed, char *err, size_t errlen) {
	struct cl_stream_cfg *c = cfg;
	cl_int rc = CL_SUCCESS;
	struct produced *p = peer_produce(c->ctx, c->q, c->svm, n, seed, &rc);
	if (!p) {
		snprintf(err, errlen, "peer_produce: CL error %d", (int)rc);
		return NULL;
	}
	if (peer_open_gate_after(p, 2) != 0)
		peer_open_gate(p);
	return p;
}

static const void *dsp_buffer(struct produced *p) { return p->buf; }
static void *dsp_event(struct produced *p) { return &p->marker; }
static void dsp_release(struct produced *p) { peer_release(p); }

#include "device_stream_peer.h"

/* peer_make_device_stream fills out with an OpenCL device stream on
 * ctx/q (svm: buffers are SVM pointers, else cl_mem) of batches batches of
 * struct<v: int32 non-null>, batch b holding b*rows+i. 0, or -1 for bad
 * arguments (rows must be > 0: OpenCL has no empty buffers). */
int peer_make_device_stream(struct ArrowDeviceArrayStream *out, cl_context ctx, cl_command_queue q, int svm,
			    intptr_t device_id, intptr_t batches, int32_t rows) {
	struct cl_stream_cfg c = {ctx, q, svm};
	return dsp_make_stream(out, ARROW_DEVICE_OPENCL, device_id, batches, rows, &c, sizeof c);
}
