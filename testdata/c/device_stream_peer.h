/* device_stream_peer.h: a C producer of ArrowDeviceArrayStream on a device
 * runtime, shared by the runtime peers (opencl_peer.c, hip_peer.c): batches
 * of struct<v: int32 non-null>, batch b holding b*rows+i, each made by the
 * peer's runtime with its own sync event. The including file defines first:
 *
 *   struct produced;  one batch's device buffer and event
 *   static struct produced *dsp_produce(void *cfg, int32_t n, int32_t seed,
 *                                       char *err, size_t errlen);
 *   static const void *dsp_buffer(struct produced *p);  the values buffer
 *   static void *dsp_event(struct produced *p);          the sync_event
 *   static void dsp_release(struct produced *p);         waits, frees all
 *
 * cfg is what the peer's dsp_make_stream caller passed, copied. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_abi.h"

/* Stream, schema and array structs made by dsp_make_stream minus those
 * released. */
static int64_t peer_stream_made, peer_stream_freed;

static void peer_made(void) { __atomic_add_fetch(&peer_stream_made, 1, __ATOMIC_SEQ_CST); }
static void peer_freed(void) { __atomic_add_fetch(&peer_stream_freed, 1, __ATOMIC_SEQ_CST); }

intptr_t peer_stream_live_count(void) {
	return __atomic_load_n(&peer_stream_made, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&peer_stream_freed, __ATOMIC_SEQ_CST);
}

/* A parent struct and its one child share a holder, freed with whichever
 * is released last: a consumer may move the child out and release it later. */
struct peer_holder {
	int refs;
	struct produced *p; /* arrays only */
	const void *parent_bufs[1];
	const void *child_bufs[2];
	struct ArrowArray child;
	struct ArrowArray *children[1];
	struct ArrowSchema child_schema;
	struct ArrowSchema *child_schemas[1];
};

static void peer_unref(struct peer_holder *h) {
	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	if (h->p)
		dsp_release(h->p);
	free(h);
}

static void peer_child_schema_release(struct ArrowSchema *s) {
	struct peer_holder *h = s->private_data;
	s->release = NULL;
	peer_freed();
	peer_unref(h);
}

static void peer_schema_release(struct ArrowSchema *s) {
	struct peer_holder *h = s->private_data;
	if (h->child_schema.release)
		h->child_schema.release(&h->child_schema);
	s->release = NULL;
	peer_freed();
	peer_unref(h);
}

static void peer_child_array_release(struct ArrowArray *a) {
	struct peer_holder *h = a->private_data;
	a->release = NULL;
	peer_freed();
	peer_unref(h);
}

static void peer_array_release(struct ArrowArray *a) {
	struct peer_holder *h = a->private_data;
	if (h->child.release)
		h->child.release(&h->child);
	a->release = NULL;
	peer_freed();
	peer_unref(h);
}

struct peer_stream {
	int32_t device_type;
	int64_t device_id, batches, next;
	int32_t rows;
	int failed;
	char err[256];
	void *cfg;
};

static int peer_stream_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out) {
	struct peer_holder *h = calloc(1, sizeof *h);
	(void)s;
	if (!h)
		return ENOMEM;
	h->refs = 2;
	h->child_schema.format = "i";
	h->child_schema.name = "v";
	h->child_schema.release = peer_child_schema_release;
	h->child_schema.private_data = h;
	h->child_schemas[0] = &h->child_schema;
	memset(out, 0, sizeof *out);
	out->format = "+s";
	out->name = "";
	out->n_children = 1;
	out->children = h->child_schemas;
	out->release = peer_schema_release;
	out->private_data = h;
	peer_made();
	peer_made();
	return 0;
}

static int peer_stream_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out) {
	struct peer_stream *ps = s->private_data;
	struct peer_holder *h;
	memset(out, 0, sizeof *out);
	out->device_type = ps->device_type;
	out->device_id = ps->device_id;
	if (ps->failed)
		return EIO;
	if (ps->next >= ps->batches)
		return 0;
	h = calloc(1, sizeof *h);
	if (!h)
		return ENOMEM;
	h->p = dsp_produce(ps->cfg, ps->rows, (int32_t)(ps->next * ps->rows), ps->err, sizeof ps->err);
	if (!h->p) {
		free(h);
		ps->failed = 1;
		return EIO;
	}
	h->refs = 2;
	h->parent_bufs[0] = NULL;
	h->child_bufs[0] = NULL;
	h->child_bufs[1] = dsp_buffer(h->p);
	h->child.length = ps->rows;
	h->child.n_buffers = 2;
	h->child.buffers = h->child_bufs;
	h->child.release = peer_child_array_release;
	h->child.private_data = h;
	h->children[0] = &h->child;
	out->array.length = ps->rows;
	out->array.n_buffers = 1;
	out->array.buffers = h->parent_bufs;
	out->array.n_children = 1;
	out->array.children = h->children;
	out->array.release = peer_array_release;
	out->array.private_data = h;
	out->sync_event = dsp_event(h->p);
	peer_made();
	peer_made();
	ps->next++;
	return 0;
}

static const char *peer_stream_error(struct ArrowDeviceArrayStream *s) {
	struct peer_stream *ps = s->private_data;
	return ps->failed ? ps->err : NULL;
}

static void peer_stream_release(struct ArrowDeviceArrayStream *s) {
	struct peer_stream *ps = s->private_data;
	free(ps->cfg);
	free(ps);
	s->release = NULL;
	s->private_data = NULL;
	peer_freed();
}

/* dsp_make_stream fills out with a stream of batches batches of rows rows
 * on device_type:device_id, made with a copy of cfg. 0, or -1 for bad
 * arguments (rows must be > 0) or no memory. */
static int dsp_make_stream(struct ArrowDeviceArrayStream *out, int32_t device_type, intptr_t device_id,
			   intptr_t batches, int32_t rows, const void *cfg, size_t cfg_size) {
	struct peer_stream *ps;
	if (!out || rows <= 0 || batches < 0)
		return -1;
	ps = calloc(1, sizeof *ps);
	if (!ps)
		return -1;
	ps->cfg = malloc(cfg_size);
	if (!ps->cfg) {
		free(ps);
		return -1;
	}
	memcpy(ps->cfg, cfg, cfg_size);
	ps->device_type = device_type;
	ps->device_id = device_id;
	ps->batches = batches;
	ps->rows = rows;
	memset(out, 0, sizeof *out);
	out->device_type = device_type;
	out->get_schema = peer_stream_schema;
	out->get_next = peer_stream_next;
	out->get_last_error = peer_stream_error;
	out->release = peer_stream_release;
	out->private_data = ps;
	peer_made();
	return 0;
}
