/*
 * Hostile producers and consumers (prefix hx_): C code that breaks the C
 * Data, Stream and Async interfaces the way buggy or malicious libraries do,
 * for the tests in hostile_test.go, stream/hostile_test.go and
 * async/hostile_test.go. The Go side must refuse each breach with an error
 * (or survive it as a no-op), never crash, and leak nothing.
 *
 * cdata.c is included for its struct builders and counters; this library
 * is built and loaded on its own, so hx_live counts exactly the schemas,
 * arrays and streams made here. Everything runs on the caller's thread.
 */
#include "cdata.c"

#include <errno.h>

/* Structs made here and not yet released. */
intptr_t hx_live(void)
{
	return __atomic_load_n(&produced_count, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&released_count, __ATOMIC_SEQ_CST);
}

/* Pointers that fault when read: a consumer that follows a pointer beyond
 * what a struct declares crashes on one of these instead of reading junk. */
#define HX_POISON(k) ((const void *)(uintptr_t)(0x10 + (k)))

/* ---- a released struct: release == NULL ---------------------------------- */

/* An array whose release is NULL is released by definition; its buffers
 * are kept here so that hx_free_orphans can free them afterwards. */
static struct ArrowArray hx_orphans[8];
static int hx_n_orphans;

static void hx_orphan(struct ArrowArray *a)
{
	if (hx_n_orphans == 8)
		abort();
	hx_orphans[hx_n_orphans++] = *a;
	a->release = NULL;
}

/* Frees what the release-NULL cases kept. */
void hx_free_orphans(void)
{
	while (hx_n_orphans > 0) {
		struct ArrowArray *a = &hx_orphans[--hx_n_orphans];
		a->release(a);
	}
}

/*
 * hx_released_array: a valid int32 array (length 5) and its schema, but
 * the array's release is NULL, which means released (it was never given a
 * release, or a consumer already moved it). mode 0: the root; mode 1: the
 * struct root of struct<int32> is live and its child's release is NULL;
 * mode 2: the schema (format "i") has release NULL, the array is live.
 */
int hx_released_array(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	switch (mode) {
	case 0:
		fill_int32(s, a, "x", ARROW_FLAG_NULLABLE, 5, 1, 0, 0);
		hx_orphan(a);
		return 0;
	case 1:
		schema_init(s, "+s", "st", 0, 1);
		fill_int32(schema_kid(s, 0), NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
		array_init(a, 5, 0, 1, 1);
		fill_int32(NULL, array_kid(a, 0), "x", 0, 5, 1, 0, 0);
		/* The parent's release frees the child's buffers only through a
		 * live child: keep it to free later. */
		hx_orphan(array_kid(a, 0));
		return 0;
	case 2: {
		fill_int32(s, a, "x", ARROW_FLAG_NULLABLE, 5, 1, 0, 0);
		s->release(s); /* really released: nothing leaks */
		return 0;
	}
	}
	return -1;
}

/* ---- NULL children --------------------------------------------------------- */

/*
 * hx_null_children: struct<a: int32, b: int32> of length 5 whose children
 * are broken. mode 0: the array's children pointer is NULL with
 * n_children 2; 1: children[1] is NULL; 2: the schema's children pointer is
 * NULL with n_children 2; 3: the schema's children[0] is NULL; 4: the
 * array's n_children is -1 (children non-NULL). The private data keeps the
 * real children, so release frees everything.
 */
int hx_null_children(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	if (mode < 0 || mode > 4)
		return -1;
	schema_init(s, "+s", "st", 0, 2);
	fill_int32(schema_kid(s, 0), NULL, "a", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	fill_int32(schema_kid(s, 1), NULL, "b", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, 5, 0, 1, 2);
	fill_int32(NULL, array_kid(a, 0), "a", 0, 5, 1, 0, 0);
	fill_int32(NULL, array_kid(a, 1), "b", 0, 5, 2, 0, 0);
	switch (mode) {
	case 0:
		a->children = NULL;
		break;
	case 1:
		a->children[1] = NULL;
		break;
	case 2:
		s->children = NULL;
		break;
	case 3:
		s->children[0] = NULL;
		break;
	case 4:
		a->n_children = -1;
		break;
	}
	return 0;
}

/* ---- n_buffers lying ---------------------------------------------------------- */

/* hx_claim_buffers makes a claim n_buffers. A claim above the real count
 * (up to 8) gets a longer buffers array: the real pointers, then poison, so
 * that reading past the type's buffers crashes. */
static void hx_claim_buffers(struct ArrowArray *a, int64_t claim)
{
	const void **bufs;
	int64_t i, have = a->n_buffers;
	if (claim > have && claim <= 8) {
		bufs = array_buffer(a, -1, (size_t)claim * sizeof *bufs);
		for (i = 0; i < claim; i++)
			bufs[i] = i < have ? a->buffers[i] : HX_POISON(i);
		a->buffers = bufs;
	}
	a->n_buffers = claim;
}

/*
 * hx_lying_buffers: arrays whose n_buffers lies. Every buffers slot past the
 * ones the type has holds a poison pointer. mode 0: int32 claiming 5
 * buffers; 1: int32 claiming 1; 2: int32 claiming 0 with buffers NULL; 3:
 * int32 claiming INT64_MAX; 4: utf8 claiming 2 (no data buffer); 5: utf8
 * claiming 4; 6: the struct root of a record batch (struct<int32>)
 * claiming 3; 7: its child claiming 3; 8: int32 claiming -1.
 */
int hx_lying_buffers(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	struct strpat p = {"s", 1, 0, 0, 0};
	struct ArrowArray *target = a;
	int64_t claim;
	switch (mode) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 8:
		fill_int32(s, a, "x", ARROW_FLAG_NULLABLE, 5, 1, 0, 0);
		claim = (int64_t[]){5, 1, 0, INT64_MAX, 0, 0, 0, 0, -1}[mode];
		break;
	case 4:
	case 5:
		fill_utf8(s, a, "u", ARROW_FLAG_NULLABLE, 5, gen_pattern, &p);
		claim = mode == 4 ? 2 : 4;
		break;
	case 6:
	case 7:
		schema_init(s, "+s", "", 0, 1);
		fill_int32(schema_kid(s, 0), NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
		array_init(a, 5, 0, 1, 1);
		fill_int32(NULL, array_kid(a, 0), "x", 0, 5, 1, 0, 0);
		if (mode == 7)
			target = array_kid(a, 0);
		claim = 3;
		break;
	default:
		return -1;
	}
	if (claim == 0 && mode == 2) {
		target->buffers = NULL;
		target->n_buffers = 0;
		return 0;
	}
	hx_claim_buffers(target, claim);
	return 0;
}

/* ---- consumers that release twice -------------------------------------------- */

/* hx_release_array_twice releases a (an array Go exported) and then calls
 * the saved release function again on the same, now released, struct. */
void hx_release_array_twice(struct ArrowArray *a)
{
	void (*release)(struct ArrowArray *) = a->release;
	release(a);
	release(a);
}

void hx_release_schema_twice(struct ArrowSchema *s)
{
	void (*release)(struct ArrowSchema *) = s->release;
	release(s);
	release(s);
}

/* hx_release_device_array_twice: the same through an ArrowDeviceArray. */
void hx_release_device_array_twice(struct ArrowDeviceArray *d) { hx_release_array_twice(&d->array); }

/*
 * hx_release_moved_child_twice moves child k out of a (as the spec allows),
 * releases the parent, releases the moved child twice, then calls the
 * parent's saved release on it once more. Returns the child's length, or
 * -1.
 */
intptr_t hx_release_moved_child_twice(struct ArrowArray *a, intptr_t k)
{
	struct ArrowArray child;
	void (*parent_release)(struct ArrowArray *) = a->release;
	void (*child_release)(struct ArrowArray *);
	int64_t n;
	if (k < 0 || k >= a->n_children || a->children[k]->release == NULL)
		return -1;
	child = *a->children[k];
	a->children[k]->release = NULL; /* moved */
	parent_release(a);
	n = child.length;
	child_release = child.release;
	child_release(&child);
	child_release(&child);
	parent_release(a);
	return n;
}

/* ---- streams ------------------------------------------------------------------ */

/*
 * A stream of struct<x: int32> batches. kind 0: every batch is empty,
 * forever; 1: the same batch forever: one batch of rows rows is built once,
 * and every get_next hands out a struct with its buffers and children and a
 * release that only counts (the batch is freed once the stream and every
 * copy are released); 2:
 * get_next fails with EIO, and get_last_error returns NULL; 3: get_next
 * fails once, then (if called again, which a consumer must not do) would
 * succeed; 4: the batches claim a device type other than the stream's
 * (device streams only).
 */
struct hx_stream {
	int kind;
	int64_t rows;
	int64_t calls;            /* get_next calls */
	int64_t calls_after_fail; /* get_next calls after a failure */
	int failed;
	struct ArrowArray shared; /* kind 1: the batch every get_next shares */
	int64_t shared_out, shared_released;
	int64_t releases; /* stream release calls */
};

static struct hx_stream *hx_last_stream;

static void hx_stream_schema(struct ArrowSchema *s)
{
	schema_init(s, "+s", "", 0, 1);
	fill_int32(schema_kid(s, 0), NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
}

static void hx_batch(struct ArrowArray *a, int64_t rows)
{
	array_init(a, rows, 0, 1, 1);
	fill_int32(NULL, array_kid(a, 0), "x", 0, rows, 1, 0, 0);
}

/* The shared batch is freed once the stream is released and every copy
 * handed out is: batches outlive their stream. */
static void hx_shared_maybe_free(struct hx_stream *p)
{
	if (p->releases > 0 && p->shared_released == p->shared_out && p->shared.release != NULL)
		p->shared.release(&p->shared);
}

static void hx_shared_release(struct ArrowArray *a)
{
	struct hx_stream *p = a->private_data;
	p->shared_released++;
	a->release = NULL;
	hx_shared_maybe_free(p);
}

static int hx_stream_next(struct hx_stream *p, struct ArrowArray *out)
{
	p->calls++;
	if (p->failed) {
		p->calls_after_fail++;
		if (p->kind == 2)
			return EIO;
	}
	switch (p->kind) {
	case 0:
		hx_batch(out, 0);
		return 0;
	case 1:
		*out = p->shared;
		out->release = hx_shared_release;
		out->private_data = p;
		p->shared_out++;
		return 0;
	case 2:
	case 3:
		if (!p->failed) {
			p->failed = 1;
			return EIO;
		}
		hx_batch(out, p->rows);
		return 0;
	case 4:
		hx_batch(out, p->rows);
		return 0;
	}
	return EINVAL;
}

static struct hx_stream *hx_stream_new(int kind, int64_t rows)
{
	struct hx_stream *p = xcalloc(1, sizeof *p);
	p->kind = kind;
	p->rows = rows;
	if (kind == 1)
		hx_batch(&p->shared, rows);
	count_produced();
	hx_last_stream = p;
	return p;
}

static void hx_stream_free(struct hx_stream *p)
{
	p->releases++;
	hx_shared_maybe_free(p);
	/* kept (not freed) so that the test can read the counters afterwards */
	count_released();
}

static int hx_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
	(void)s;
	hx_stream_schema(out);
	return 0;
}

static int hx_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
	return hx_stream_next(s->private_data, out);
}

static const char *hx_get_last_error(struct ArrowArrayStream *s)
{
	struct hx_stream *p = s->private_data;
	return p->kind == 2 ? NULL : "injected failure";
}

static void hx_release(struct ArrowArrayStream *s)
{
	hx_stream_free(s->private_data);
	s->release = NULL;
}

/*
 * hx_make_stream fills out with a stream of the given kind (see struct
 * hx_stream). null_fn names a function pointer to leave NULL: 0 none, 1
 * get_schema, 2 get_next, 3 get_last_error.
 */
int hx_make_stream(struct ArrowArrayStream *out, int kind, intptr_t rows, int null_fn)
{
	if (out == NULL || kind < 0 || kind > 3)
		return -1;
	out->private_data = hx_stream_new(kind, rows);
	out->get_schema = null_fn == 1 ? NULL : hx_get_schema;
	out->get_next = null_fn == 2 ? NULL : hx_get_next;
	out->get_last_error = null_fn == 3 ? NULL : hx_get_last_error;
	out->release = hx_release;
	return 0;
}

static int hx_dev_get_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out)
{
	(void)s;
	hx_stream_schema(out);
	return 0;
}

static int hx_dev_get_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out)
{
	struct hx_stream *p = s->private_data;
	int rc;
	memset(out, 0, sizeof *out);
	rc = hx_stream_next(p, &out->array);
	out->device_type = p->kind == 4 ? ARROW_DEVICE_CUDA : ARROW_DEVICE_CPU;
	out->device_id = p->kind == 4 ? 0 : -1;
	return rc;
}

static const char *hx_dev_get_last_error(struct ArrowDeviceArrayStream *s)
{
	struct hx_stream *p = s->private_data;
	return p->kind == 2 ? NULL : "injected failure";
}

static void hx_dev_release(struct ArrowDeviceArrayStream *s)
{
	hx_stream_free(s->private_data);
	s->release = NULL;
}

/* hx_make_device_stream: hx_make_stream for a CPU ArrowDeviceArrayStream
 * (kind 4 too). */
int hx_make_device_stream(struct ArrowDeviceArrayStream *out, int kind, intptr_t rows)
{
	if (out == NULL || kind < 0 || kind > 4)
		return -1;
	out->device_type = ARROW_DEVICE_CPU;
	out->private_data = hx_stream_new(kind, rows);
	out->get_schema = hx_dev_get_schema;
	out->get_next = hx_dev_get_next;
	out->get_last_error = hx_dev_get_last_error;
	out->release = hx_dev_release;
	return 0;
}

/* Counters of the last stream made (kept after its release): 0 get_next
 * calls, 1 calls after a failure, 2 shared batches handed out, 3 shared
 * batches released, 4 stream release calls. */
intptr_t hx_stream_counter(int which)
{
	struct hx_stream *p = hx_last_stream;
	if (p == NULL)
		return -1;
	switch (which) {
	case 0:
		return p->calls;
	case 1:
		return p->calls_after_fail;
	case 2:
		return p->shared_out;
	case 3:
		return p->shared_released;
	case 4:
		return p->releases;
	}
	return -1;
}

/* Frees the last stream's bookkeeping. */
void hx_stream_forget(void)
{
	free(hx_last_stream);
	hx_last_stream = NULL;
}

/*
 * hx_abuse_stream: a consumer of a stream Go exported that breaks every
 * rule. rc[0] get_schema, rc[1] the first get_next, rc[2] get_next with a
 * NULL out, then release; after release, with the saved function pointers:
 * rc[3] get_next (out must stay released: rc[5] is 1 if it did), rc[4]
 * get_schema (out must stay released too: rc[6]), a second release, and
 * get_last_error (rc[7]: 1 if it returned non-NULL). Schemas and batches
 * received are released.
 */
void hx_abuse_stream(struct ArrowArrayStream *s, int64_t *rc)
{
	struct ArrowArrayStream saved = *s;
	struct ArrowSchema sch;
	struct ArrowArray arr;
	memset(&sch, 0, sizeof sch);
	memset(&arr, 0, sizeof arr);
	rc[0] = s->get_schema(s, &sch);
	if (sch.release != NULL)
		sch.release(&sch);
	rc[1] = s->get_next(s, &arr);
	if (arr.release != NULL)
		arr.release(&arr);
	rc[2] = s->get_next(s, NULL);
	s->release(s);
	memset(&arr, 0, sizeof arr);
	memset(&sch, 0, sizeof sch);
	rc[3] = saved.get_next(s, &arr);
	rc[5] = arr.release == NULL;
	if (arr.release != NULL)
		arr.release(&arr);
	rc[4] = saved.get_schema(s, &sch);
	rc[6] = sch.release == NULL;
	if (sch.release != NULL)
		sch.release(&sch);
	saved.release(s);
	rc[7] = saved.get_last_error(s) != NULL;
}

/* ---- n_children lying, against the format or the type ---------------------- */

/* A count that no children array is that long for. */
#define HX_CLAIM 1000

/* hx_schema_claims makes s claim HX_CLAIM children; its children array
 * holds the real ones, then a poison pointer (where a walker that trusts
 * the count crashes), or is NULL when null_array. */
static void hx_schema_claims(struct ArrowSchema *s, int null_array)
{
	struct schema_priv *p = s->private_data;
	struct ArrowSchema **c = xcalloc((size_t)p->n_kids + 1, sizeof *c);
	memcpy(c, p->kids, (size_t)p->n_kids * sizeof *c);
	c[p->n_kids] = (struct ArrowSchema *)(uintptr_t)HX_POISON(1);
	free(p->children);
	p->children = c;
	s->children = null_array ? NULL : c;
	s->n_children = HX_CLAIM;
}

/* hx_array_claims is hx_schema_claims for an array. */
static void hx_array_claims(struct ArrowArray *a)
{
	struct array_priv *p = a->private_data;
	struct ArrowArray **c = xcalloc((size_t)p->n_kids + 1, sizeof *c);
	memcpy(c, p->kids, (size_t)p->n_kids * sizeof *c);
	c[p->n_kids] = (struct ArrowArray *)(uintptr_t)HX_POISON(1);
	free(p->children);
	p->children = c;
	a->children = c;
	a->n_children = HX_CLAIM;
}

/* map<utf8, int32>, schema only. */
static void hx_map_schema(struct ArrowSchema *s)
{
	struct ArrowSchema *e;
	schema_init(s, "+m", "m", ARROW_FLAG_NULLABLE, 1);
	e = schema_kid(s, 0);
	schema_init(e, "+s", "entries", 0, 2);
	schema_init(schema_kid(e, 0), "u", "key", 0, 0);
	schema_init(schema_kid(e, 1), "i", "value", ARROW_FLAG_NULLABLE, 0);
}

/*
 * hx_lying_children: one valid pair per format family, then one count
 * lies. Schema n_children claims HX_CLAIM (children: the real ones, then
 * poison) for mode 0 int32, 1 utf8, 2 list, 3 map, 4 fixed-size list, 5
 * run-end encoded, 6 sparse union, 7 dense union, 8 a struct's int32
 * child, 9 a dictionary's value schema; 10: int32 with children NULL; 11:
 * a utf8 schema (not an index type) with a poison dictionary pointer.
 * Array n_children claims HX_CLAIM (schema honest) for 12 int32, 13 utf8,
 * 14 list, 15 struct, 16 sparse union, 17 dense union, 18 run-end encoded,
 * 19 fixed-size list, 20 a dictionary array's dictionary, 21 the struct
 * root of a record batch. 22: an int32 array with a poison dictionary.
 * Array n_buffers claims too many (poison past the real ones) for 23 list
 * (5), 24 struct (4), 25 sparse union (4), 26 run-end encoded (2), 27 null
 * (1).
 */
int hx_lying_children(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	struct strpat p = {"s", 1, 0, 0, 0};
	enum { N = 6 };
	switch (mode) {
	case 0:
	case 10:
	case 12:
	case 22:
		fill_int32(s, a, "x", ARROW_FLAG_NULLABLE, N, 1, 0, 0);
		break;
	case 1:
	case 11:
	case 13:
		fill_utf8(s, a, "u", ARROW_FLAG_NULLABLE, N, gen_pattern, &p);
		break;
	case 2:
	case 14:
	case 23:
		fill_list_int64(s, a, "l", ARROW_FLAG_NULLABLE, N);
		break;
	case 3:
		hx_map_schema(s);
		fill_int32(NULL, a, NULL, 0, N, 1, 0, 0);
		break;
	case 4:
	case 19:
		m_fixed_size_list(s, a, "+w:3", 3 * 4);
		break;
	case 5:
	case 18:
	case 26:
		fill_ree(s, a, "ree", ARROW_FLAG_NULLABLE, N);
		break;
	case 6:
	case 16:
	case 25:
		fill_union(s, a, "su", ARROW_FLAG_NULLABLE, N, 0);
		break;
	case 7:
	case 17:
		fill_union(s, a, "du", ARROW_FLAG_NULLABLE, N, 1);
		break;
	case 8:
	case 15:
	case 24:
		fill_struct(s, a, "st", ARROW_FLAG_NULLABLE, N);
		break;
	case 9:
	case 20:
		fill_dict_utf8(s, a, "d", ARROW_FLAG_NULLABLE, N);
		break;
	case 21:
		hx_stream_schema(s);
		hx_batch(a, N);
		break;
	case 27:
		schema_init(s, "n", "n", ARROW_FLAG_NULLABLE, 0);
		array_init(a, N, N, 0, 0);
		break;
	default:
		return -1;
	}
	switch (mode) {
	case 8:
		hx_schema_claims(schema_kid(s, 0), 0);
		break;
	case 9:
		hx_schema_claims(s->dictionary, 0);
		break;
	case 10:
		hx_schema_claims(s, 1);
		break;
	case 11:
		s->dictionary = (struct ArrowSchema *)(uintptr_t)HX_POISON(2);
		break;
	case 20:
		hx_array_claims(a->dictionary);
		break;
	case 22:
		a->dictionary = (struct ArrowArray *)(uintptr_t)HX_POISON(2);
		break;
	case 23:
		hx_claim_buffers(a, 5);
		break;
	case 24:
	case 25:
		hx_claim_buffers(a, 4);
		break;
	case 26:
		hx_claim_buffers(a, 2);
		break;
	case 27:
		hx_claim_buffers(a, 1);
		break;
	default:
		if (mode < 12)
			hx_schema_claims(s, 0);
		else
			hx_array_claims(a);
	}
	return 0;
}

/* ---- values that break the rules: full validation must see them -------------- */

/* A buffer of rows+1 offsets, w bytes each (4 or 8), from offs. */
static void hx_offsets(struct ArrowArray *a, int64_t i, int w, const int64_t *offs, int64_t rows)
{
	char *b = array_buffer(a, i, (size_t)(rows + 1) * (size_t)w);
	int64_t k;
	int32_t o32;
	for (k = 0; k <= rows; k++) {
		o32 = (int32_t)offs[k];
		if (w == 4)
			memcpy(b + 4 * k, &o32, 4);
		else
			memcpy(b + 8 * k, &offs[k], 8);
	}
}

/* A binary-like (list: over an int32 child) array of rows rows whose
 * offsets are offs, w bytes each, over 4 bytes of data or 4 child values. */
static void hx_offset_layout(struct ArrowSchema *s, struct ArrowArray *a, const char *format, int w,
                             const int64_t *offs, int64_t rows, int list)
{
	schema_init(s, format, "x", ARROW_FLAG_NULLABLE, list);
	array_init(a, rows, 0, list ? 2 : 3, list);
	hx_offsets(a, 1, w, offs, rows);
	if (list)
		fill_int32(schema_kid(s, 0), array_kid(a, 0), "item", ARROW_FLAG_NULLABLE, 4, 1, 0, 0);
	else
		memcpy(array_buffer(a, 2, 4), "abcd", 4);
}

/* A utf8_view of one 17-byte value in variadic buffer 0 at offset off,
 * whose variadic size is size. */
static void hx_view(struct ArrowSchema *s, struct ArrowArray *a, int32_t off, int64_t size)
{
	static const char val[] = "abcdefghijklmnopq";
	int32_t len = 17, zero = 0;
	uint8_t *h;
	schema_init(s, "vu", "v", ARROW_FLAG_NULLABLE, 0);
	array_init(a, 1, 0, 4, 0);
	h = array_buffer(a, 1, 16);
	memcpy(h, &len, 4);
	memcpy(h + 4, val, 4);
	memcpy(h + 8, &zero, 4);
	memcpy(h + 12, &off, 4);
	memcpy(array_buffer(a, 2, 17), val, 17);
	memcpy(array_buffer(a, 3, 8), &size, 8);
}

/*
 * hx_corrupt: arrays that break rules about their values. mode 0-3:
 * decimal32, 64, 128, 256 of precision 2 holding 99 and 12345 (the
 * low word; the host is little-endian); 4: a dense union whose offsets
 * into child 5 go back (1, then 0); offsets over 4 bytes of data (4
 * values of a list's child): 5 utf8 {0, 2, INT32_MIN}; 6 large_utf8 {0, 2,
 * 2^62}; 7 binary {0, 2, INT32_MIN}; 8 large_binary {0, 2, 2^62}; 9 list
 * {0, 2, INT32_MAX}; 10 large list {0, 2, 2^62}; 11 large_utf8 sliced
 * (offset 1, length 1) {0, 2^62, 2^62+2}; 12 large list view of one row,
 * offset 2^62, size 1, over 3 values; 13 utf8_view whose variadic size is
 * 2^62; 14 utf8_view whose value is at offset INT32_MAX of its 17-byte
 * buffer.
 */
int hx_corrupt(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	static const char *const dec[] = {"d:2,0,32", "d:2,0,64", "d:2,0", "d:2,0,256"};
	const int64_t big = (int64_t)1 << 62;
	const int64_t narrow[] = {0, 2, INT32_MIN}, wide[] = {0, 2, big}, list32[] = {0, 2, INT32_MAX};
	const int64_t sliced[] = {0, big, big + 2};
	int64_t v;
	char *vals;
	int w;
	switch (mode) {
	case 0:
	case 1:
	case 2:
	case 3:
		w = 4 << mode;
		schema_init(s, dec[mode], "d", ARROW_FLAG_NULLABLE, 0);
		array_init(a, 2, 0, 2, 0);
		vals = array_buffer(a, 1, 2 * (size_t)w);
		v = 99;
		memcpy(vals, &v, w == 4 ? 4 : 8);
		v = 12345;
		memcpy(vals + w, &v, w == 4 ? 4 : 8); /* positive: the higher words stay 0 */
		break;
	case 4:
		fill_union(s, a, "du", ARROW_FLAG_NULLABLE, 4, 1);
		((int32_t *)a->buffers[1])[0] = 1;
		((int32_t *)a->buffers[1])[2] = 0;
		break;
	case 5:
		hx_offset_layout(s, a, "u", 4, narrow, 2, 0);
		break;
	case 6:
		hx_offset_layout(s, a, "U", 8, wide, 2, 0);
		break;
	case 7:
		hx_offset_layout(s, a, "z", 4, narrow, 2, 0);
		break;
	case 8:
		hx_offset_layout(s, a, "Z", 8, wide, 2, 0);
		break;
	case 9:
		hx_offset_layout(s, a, "+l", 4, list32, 2, 1);
		break;
	case 10:
		hx_offset_layout(s, a, "+L", 8, wide, 2, 1);
		break;
	case 11:
		hx_offset_layout(s, a, "U", 8, sliced, 2, 0);
		a->offset = 1;
		a->length = 1;
		break;
	case 12: {
		const int64_t off = big, size = 1;
		schema_init(s, "+vL", "lv", ARROW_FLAG_NULLABLE, 1);
		array_init(a, 1, 0, 3, 1);
		memcpy(array_buffer(a, 1, 8), &off, 8);
		memcpy(array_buffer(a, 2, 8), &size, 8);
		fill_int32(schema_kid(s, 0), array_kid(a, 0), "item", ARROW_FLAG_NULLABLE, 3, 1, 0, 0);
		break;
	}
	case 13:
		hx_view(s, a, 0, big);
		break;
	case 14:
		hx_view(s, a, INT32_MAX, 17);
		break;
	default:
		return -1;
	}
	return 0;
}

/* ---- a NULL buffer where the layout needs bytes ----------------------------- */

/*
 * hx_null_buffer: an array of 3 rows (0 rows for modes 0 and 14) whose every
 * buffer is NULL but for what its children need, with n_buffers right for
 * the format; the validity bitmap (buffer 0) may be NULL, no other buffer
 * that rows need may. mode 0: utf8 of length 0 (nothing needed: valid);
 * 1: int32; 2: bool; 3: fixed_size_binary "w:4"; 4: utf8 (offsets NULL);
 * 5: utf8 whose offsets {0, 2, 4, 6} reach into a NULL data buffer; 6:
 * large_binary likewise; 7: list_view over 3 int32; 8: large_list_view;
 * 9: utf8_view; 10: binary_view; 11: dense union (type ids present,
 * offsets NULL); 12: sparse union with type ids NULL; 13: list (offsets
 * NULL); 14: utf8 of length 0 at offset 2 (valid).
 */
int hx_null_buffer(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	static const char *const formats[] = {"u", "i", "b", "w:4", "u", "u", "Z", "+vl", "+vL", "vu", "vz"};
	const int64_t n = mode == 0 ? 0 : 3;
	int64_t i;
	if (mode >= 0 && mode <= 10) {
		int64_t nbuf = mode == 1 || mode == 2 || mode == 3 ? 2 : 3;
		int list = mode == 7 || mode == 8;
		schema_init(s, formats[mode], "x", ARROW_FLAG_NULLABLE, list);
		array_init(a, n, 0, nbuf, list);
		if (list)
			fill_int32(schema_kid(s, 0), array_kid(a, 0), "item", ARROW_FLAG_NULLABLE, 3, 1, 0, 0);
		if (mode == 5 || mode == 6) {
			const int64_t offs[] = {0, 2, 4, 6};
			hx_offsets(a, 1, mode == 5 ? 4 : 8, offs, n);
		}
		return 0;
	}
	switch (mode) {
	case 11:
	case 12: {
		int dense = mode == 11;
		int8_t *types;
		fill_union(s, NULL, "u", ARROW_FLAG_NULLABLE, 0, dense);
		array_init(a, n, 0, dense ? 2 : 1, 2);
		fill_int32(NULL, array_kid(a, 0), NULL, 0, n, 1, 0, 0);
		fill_utf8(NULL, array_kid(a, 1), NULL, 0, 0, gen_pattern, &(struct strpat){"", 1, 0, 0, 0});
		if (dense) {
			types = array_buffer(a, 0, (size_t)n);
			for (i = 0; i < n; i++)
				types[i] = 5;
		}
		return 0;
	}
	case 13:
		schema_init(s, "+l", "x", ARROW_FLAG_NULLABLE, 1);
		array_init(a, n, 0, 2, 1);
		fill_int32(schema_kid(s, 0), array_kid(a, 0), "item", ARROW_FLAG_NULLABLE, 3, 1, 0, 0);
		return 0;
	case 14: /* utf8 of length 0 at offset 2 (a slice at the end): valid */
		schema_init(s, "u", "x", ARROW_FLAG_NULLABLE, 0);
		array_init(a, 0, 0, 3, 0);
		a->offset = 2;
		return 0;
	}
	return -1;
}

/* ---- a sparse union with a child too short ---------------------------------- */

/*
 * hx_short_sparse: sparse union<5: int32, 7: utf8> of 3 rows, all of type
 * 5, whose child 7 has 1 row: no row selects it, but a sparse union's
 * children must all be as long as the union (arrow-go slices each). mode
 * 0: the union itself; 1: a dictionary (int8 indices {0, 0}) whose values
 * are that union (arrow-go makes a dictionary's values only when asked).
 */
int hx_short_sparse(int mode, struct ArrowSchema *s, struct ArrowArray *a)
{
	struct ArrowSchema *vs = s;
	struct ArrowArray *va = a;
	int8_t *types;
	int64_t i;
	if (mode == 1) {
		schema_init(s, "c", "d", ARROW_FLAG_NULLABLE, 0);
		array_init(a, 2, 0, 2, 0);
		array_buffer(a, 1, 2); /* indices {0, 0} */
		vs = schema_add_dictionary(s);
		va = array_add_dictionary(a);
	} else if (mode != 0) {
		return -1;
	}
	fill_union(vs, NULL, "u", ARROW_FLAG_NULLABLE, 0, 0);
	array_init(va, 3, 0, 1, 2);
	types = array_buffer(va, 0, 3);
	for (i = 0; i < 3; i++)
		types[i] = 5;
	fill_int32(NULL, array_kid(va, 0), NULL, 0, 3, 1, 0, 0);
	fill_utf8(NULL, array_kid(va, 1), NULL, 0, 1, gen_pattern, &(struct strpat){"v", 1, 0, 0, 0});
	return 0;
}

/* ---- one child shared n times ------------------------------------------------ */

/*
 * hx_shared_child: a struct schema of n children that are all the same
 * int32 child struct, whose name is name_len bytes long: little memory
 * that names n * name_len bytes.
 */
int hx_shared_child(struct ArrowSchema *s, intptr_t n, intptr_t name_len)
{
	struct schema_priv *p;
	char *name = xcalloc((size_t)name_len + 1, 1);
	intptr_t i;
	memset(name, 'n', (size_t)name_len);
	schema_init(s, "+s", "", 0, 1);
	schema_init(schema_kid(s, 0), "i", name, ARROW_FLAG_NULLABLE, 0);
	free(name);
	p = s->private_data;
	free(p->children);
	p->children = xcalloc((size_t)n, sizeof *p->children);
	for (i = 0; i < n; i++)
		p->children[i] = p->kids[0];
	s->children = p->children;
	s->n_children = n;
	return 0;
}

/* ---- async: a handler that refuses ---------------------------------------- */

enum {
	HX_FAIL_SCHEMA = 1,          /* on_schema returns EINVAL, schema untouched */
	HX_FAIL_SCHEMA_RELEASED = 2, /* on_schema releases the schema, returns EINVAL */
	HX_FAIL_TASK = 4,            /* on_next_task fails on the first task, unextracted */
	HX_FAIL_TASK_EXTRACTED = 8,  /* ... after extracting (and releasing) it */
	HX_EXTRACT_TWICE = 16,       /* extract_data twice per task, then succeed */
	HX_BAD_REQUEST = 32,         /* request(0) from on_schema */
	HX_FAIL_END = 64,            /* on_next_task(NULL) returns EINVAL */
};

struct hx_handler {
	struct ArrowAsyncDeviceStreamHandler h;
	int mode;
	int64_t schemas, tasks, ends, errors, releases;
	int64_t second_extract_rc; /* the last second extract_data's result */
	int64_t extracted_rows;
	int last_code;
};

static int hx_on_schema(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowSchema *s)
{
	struct hx_handler *x = h->private_data;
	x->schemas++;
	if (x->mode & HX_FAIL_SCHEMA)
		return EINVAL;
	if (s != NULL && s->release != NULL)
		s->release(s);
	if (x->mode & HX_FAIL_SCHEMA_RELEASED)
		return EINVAL;
	h->producer->request(h->producer, (x->mode & HX_BAD_REQUEST) ? 0 : 4);
	return 0;
}

static int hx_extract(struct ArrowAsyncTask *t, struct hx_handler *x)
{
	struct ArrowDeviceArray out;
	int rc;
	memset(&out, 0, sizeof out);
	rc = t->extract_data(t, &out);
	if (rc == 0 && out.array.release != NULL) {
		x->extracted_rows += out.array.length;
		out.array.release(&out.array);
	}
	return rc;
}

static int hx_on_next_task(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowAsyncTask *t, const char *md)
{
	struct hx_handler *x = h->private_data;
	(void)md;
	if (t == NULL) {
		x->ends++;
		return (x->mode & HX_FAIL_END) ? EINVAL : 0;
	}
	x->tasks++;
	if (x->mode & HX_FAIL_TASK)
		return EINVAL;
	if (x->mode & HX_FAIL_TASK_EXTRACTED) {
		hx_extract(t, x);
		return EIO;
	}
	hx_extract(t, x);
	if (x->mode & HX_EXTRACT_TWICE) {
		struct ArrowDeviceArray out;
		memset(&out, 0, sizeof out);
		x->second_extract_rc = t->extract_data(t, &out);
		if (out.array.release != NULL) /* a second batch: a bug, but no leak */
			out.array.release(&out.array);
	}
	h->producer->request(h->producer, 1);
	return 0;
}

static void hx_on_error(struct ArrowAsyncDeviceStreamHandler *h, int code, const char *msg, const char *md)
{
	struct hx_handler *x = h->private_data;
	(void)msg;
	(void)md;
	x->errors++;
	x->last_code = code;
}

static void hx_handler_release(struct ArrowAsyncDeviceStreamHandler *h)
{
	struct hx_handler *x = h->private_data;
	x->releases++;
	h->release = NULL; /* the struct stays: the test reads the counters */
}

struct hx_handler *hx_handler_new(int mode)
{
	struct hx_handler *x = xcalloc(1, sizeof *x);
	x->mode = mode;
	x->second_extract_rc = -1;
	x->h.on_schema = hx_on_schema;
	x->h.on_next_task = hx_on_next_task;
	x->h.on_error = hx_on_error;
	x->h.release = hx_handler_release;
	x->h.private_data = x;
	return x;
}

struct ArrowAsyncDeviceStreamHandler *hx_handler_struct(struct hx_handler *x) { return &x->h; }

/* Counters: 0 on_schema calls, 1 tasks, 2 ends, 3 on_error calls, 4
 * releases, 5 the last on_error code, 6 the second extract_data's result,
 * 7 rows extracted. */
intptr_t hx_handler_counter(struct hx_handler *x, int which)
{
	switch (which) {
	case 0:
		return x->schemas;
	case 1:
		return x->tasks;
	case 2:
		return x->ends;
	case 3:
		return x->errors;
	case 4:
		return x->releases;
	case 5:
		return x->last_code;
	case 6:
		return x->second_extract_rc;
	case 7:
		return x->extracted_rows;
	}
	return -1;
}

void hx_handler_free(struct hx_handler *x) { free(x); }

/* hx_handler_drop sets one of x's callbacks to NULL: 0 on_schema, 1
 * on_next_task, 2 on_error. */
void hx_handler_drop(struct hx_handler *x, int which)
{
	switch (which) {
	case 0:
		x->h.on_schema = NULL;
		break;
	case 1:
		x->h.on_next_task = NULL;
		break;
	case 2:
		x->h.on_error = NULL;
		break;
	}
}

/* ---- async: a producer that calls a handler wrongly ---------------------- */

struct hx_producer {
	struct ArrowAsyncProducer p;
	int64_t requests, cancels;
};

static void hx_request(struct ArrowAsyncProducer *p, int64_t n)
{
	(void)n;
	((struct hx_producer *)p->private_data)->requests++;
}

static void hx_cancel(struct ArrowAsyncProducer *p) { ((struct hx_producer *)p->private_data)->cancels++; }

static int64_t hx_task_extracts;

/* A task this producer hands out: extract_data counts and gives nothing. */
static int hx_task_extract(struct ArrowAsyncTask *t, struct ArrowDeviceArray *out)
{
	(void)t;
	hx_task_extracts++;
	if (out != NULL)
		memset(out, 0, sizeof *out);
	return 0;
}

intptr_t hx_task_extract_calls(void) { return hx_task_extracts; }

/*
 * hx_produce_nulls drives handler h (a Go Handler) on the calling thread,
 * breaking the rules. With handler->producer populated:
 *   rc[0] on_schema(h, NULL)                 (a NULL schema)
 *   rc[1] on_schema(NULL, schema)            (a NULL handler; the schema is
 *                                             released here if still live)
 *   rc[2] on_next_task(NULL, task, NULL)
 *         on_error(NULL, EIO, NULL, NULL), release(NULL)
 *   rc[3] on_next_task(h, task with extract_data NULL, NULL): only if
 *         null_task (the Go side must never call it)
 *         on_error(h, EIO, NULL message, NULL metadata)
 * then it copies *h, calls release(h) (the Go handler frees h), and through
 * the copy (C memory of its own, holding the stale private_data):
 *   rc[4] on_schema(copy, schema), rc[5] on_next_task(copy, task, NULL),
 *         on_error(copy, ...), release(copy) (a second release).
 * rc[6]: request calls the handler made, rc[7]: cancel calls.
 */
void hx_produce_nulls(struct ArrowAsyncDeviceStreamHandler *h, int null_task, int64_t *rc)
{
	struct hx_producer *prod = xcalloc(1, sizeof *prod);
	struct ArrowAsyncDeviceStreamHandler copy;
	struct ArrowSchema s;
	struct ArrowAsyncTask task = {hx_task_extract, NULL};
	struct ArrowAsyncTask null_fn_task = {NULL, (void *)HX_POISON(0)};

	prod->p.device_type = ARROW_DEVICE_CPU;
	prod->p.request = hx_request;
	prod->p.cancel = hx_cancel;
	prod->p.private_data = prod;
	h->producer = &prod->p;

	rc[0] = h->on_schema(h, NULL);
	hx_stream_schema(&s);
	rc[1] = h->on_schema(NULL, &s);
	if (s.release != NULL)
		s.release(&s);
	rc[2] = h->on_next_task(NULL, &task, NULL);
	h->on_error(NULL, EIO, NULL, NULL);
	h->release(NULL);
	rc[3] = null_task ? h->on_next_task(h, &null_fn_task, NULL) : 0;
	h->on_error(h, EIO, NULL, NULL);

	copy = *h;
	h->release(h); /* h is freed now */
	hx_stream_schema(&s);
	rc[4] = copy.on_schema(&copy, &s);
	if (s.release != NULL)
		s.release(&s);
	rc[5] = copy.on_next_task(&copy, &task, NULL);
	copy.on_error(&copy, EIO, "after release", NULL);
	copy.release(&copy);
	rc[6] = prod->requests;
	rc[7] = prod->cancels;
	free(prod);
}

/*
 * hx_null_fn_start populates h->producer with a producer whose request
 * (which 0) or cancel (which 1) is NULL and calls on_schema with a valid
 * schema; it returns the producer, whose on_schema result rc gets.
 * hx_null_fn_finish ends the stream as a producer does after on_schema's
 * error (release, and nothing more) and frees the producer.
 */
struct hx_producer *hx_null_fn_start(struct ArrowAsyncDeviceStreamHandler *h, int which, int64_t *rc)
{
	struct hx_producer *prod = xcalloc(1, sizeof *prod);
	struct ArrowSchema s;
	prod->p.device_type = ARROW_DEVICE_CPU;
	prod->p.request = which == 0 ? NULL : hx_request;
	prod->p.cancel = which == 1 ? NULL : hx_cancel;
	prod->p.private_data = prod;
	h->producer = &prod->p;
	hx_stream_schema(&s);
	*rc = h->on_schema(h, &s);
	if (s.release != NULL)
		s.release(&s);
	return prod;
}

void hx_null_fn_finish(struct ArrowAsyncDeviceStreamHandler *h, struct hx_producer *prod)
{
	h->release(h);
	free(prod);
}

/*
 * hx_produce_null_extract drives h properly (a valid schema, then one task)
 * except that the task's extract_data is NULL; then the end and release.
 * Returns on_schema's result, or on_next_task's if that failed.
 */
int hx_produce_null_extract(struct ArrowAsyncDeviceStreamHandler *h)
{
	struct hx_producer *prod = xcalloc(1, sizeof *prod);
	struct ArrowSchema s;
	struct ArrowAsyncTask task = {NULL, (void *)HX_POISON(0)};
	int rc;
	prod->p.device_type = ARROW_DEVICE_CPU;
	prod->p.request = hx_request;
	prod->p.cancel = hx_cancel;
	prod->p.private_data = prod;
	h->producer = &prod->p;
	hx_stream_schema(&s);
	rc = h->on_schema(h, &s);
	if (s.release != NULL)
		s.release(&s);
	if (rc == 0)
		rc = h->on_next_task(h, &task, NULL);
	if (rc == 0)
		h->on_next_task(h, NULL, NULL);
	h->release(h);
	free(prod);
	return rc;
}
