/*
 * The C side of the stream package's tests: producers of ArrowArrayStream
 * and ArrowDeviceArrayStream (CPU) with error injection, and consumers that
 * drain streams Go exported.
 *
 * cdata.c is included for its struct builders and counters: this library is
 * built and loaded on its own (RTLD_LOCAL), so st_live_count counts exactly
 * the streams, schemas and arrays made here.
 *
 * Every stream carries the same record batches: struct<id: int64,
 * name: utf8 nullable, score: float64, tags: list<int32>>, schema metadata
 * {"producer": "st"}; batch b row r has id b*1000+r, name "n<b>_<r>" (null
 * when r%5 == 4), score r*0.5, tags [r, r+1] for even r and [] for odd r.
 * The Go tests build the same batches with arrow-go; keep them in step.
 */
#include "cdata.c"

#include <errno.h>
#include <pthread.h>

/* Streams and batch structs (children included) made minus released. */
intptr_t st_live_count(void)
{
	return __atomic_load_n(&produced_count, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&released_count, __ATOMIC_SEQ_CST);
}

/* ---- the batches -------------------------------------------------------- */

static int st_name_null(int64_t r) { return r % 5 == 4; }

static int st_name(char *buf, size_t cap, int64_t b, int64_t r)
{
	return snprintf(buf, cap, "n%" PRId64 "_%" PRId64, b, r);
}

static void st_schema(struct ArrowSchema *s)
{
	static const char *const kv[] = {"producer", "st"};
	struct ArrowSchema *tags;
	schema_init(s, "+s", "", 0, 4);
	schema_metadata(s, 1, kv);
	schema_init(schema_kid(s, 0), "l", "id", 0, 0);
	schema_init(schema_kid(s, 1), "u", "name", ARROW_FLAG_NULLABLE, 0);
	schema_init(schema_kid(s, 2), "g", "score", 0, 0);
	tags = schema_kid(s, 3);
	schema_init(tags, "+l", "tags", 0, 1);
	schema_init(schema_kid(tags, 0), "i", "item", ARROW_FLAG_NULLABLE, 0);
}

static void st_batch(struct ArrowArray *a, int64_t b, int64_t rows)
{
	struct ArrowArray *id, *name, *score, *tags, *items;
	int64_t r, nulls = 0, total = 0, k;
	int64_t *idv;
	double *sv;
	int32_t *off, *iv;
	char *data;
	uint8_t *bm = NULL;
	char buf[64];

	array_init(a, rows, 0, 1, 4);
	id = array_kid(a, 0);
	name = array_kid(a, 1);
	score = array_kid(a, 2);
	tags = array_kid(a, 3);

	array_init(id, rows, 0, 2, 0);
	idv = array_buffer(id, 1, (size_t)rows * 8);
	for (r = 0; r < rows; r++)
		idv[r] = b * 1000 + r;

	for (r = 0; r < rows; r++) {
		if (st_name_null(r))
			nulls++;
		else
			total += st_name(buf, sizeof buf, b, r);
	}
	array_init(name, rows, nulls, 3, 0);
	off = array_buffer(name, 1, (size_t)(rows + 1) * 4);
	data = array_buffer(name, 2, (size_t)total + 1); /* +1: snprintf's NUL */
	if (nulls > 0)
		bm = array_buffer(name, 0, bitmap_bytes(rows));
	total = 0;
	for (r = 0; r < rows; r++) {
		if (!st_name_null(r)) {
			total += st_name(data + total, sizeof buf, b, r);
			if (bm != NULL)
				bit_set(bm, r);
		}
		off[r + 1] = (int32_t)total;
	}

	array_init(score, rows, 0, 2, 0);
	sv = array_buffer(score, 1, (size_t)rows * 8);
	for (r = 0; r < rows; r++)
		sv[r] = (double)r * 0.5;

	array_init(tags, rows, 0, 2, 1);
	off = array_buffer(tags, 1, (size_t)(rows + 1) * 4);
	items = array_kid(tags, 0);
	total = (rows + 1) / 2 * 2;
	array_init(items, total, 0, 2, 0);
	iv = array_buffer(items, 1, (size_t)total * 4);
	for (r = 0, k = 0; r < rows; r++) {
		if (r % 2 == 0) {
			iv[k++] = (int32_t)r;
			iv[k++] = (int32_t)(r + 1);
		}
		off[r + 1] = (int32_t)k;
	}
}

/* ---- checks of batches Go exported -------------------------------------- */

/* st_check_schema: the shape of st_schema (metadata not required); 0 or a
 * fail() code. */
static int st_check_schema(const struct ArrowSchema *s)
{
	static const char *const names[4] = {"id", "name", "score", "tags"};
	static const char *const formats[4] = {"l", "u", "g", "+l"};
	const struct ArrowSchema *c;
	int i;
	if (s->release == NULL)
		return fail(200, "schema is released");
	if (s->format == NULL || strcmp(s->format, "+s") != 0)
		return fail(201, "schema format %s, want +s", s->format ? s->format : "NULL");
	if (s->n_children != 4 || s->children == NULL)
		return fail(202, "schema has %" PRId64 " children, want 4", s->n_children);
	for (i = 0; i < 4; i++) {
		c = s->children[i];
		if (c == NULL || c->name == NULL || c->format == NULL || strcmp(c->name, names[i]) != 0 ||
		    strcmp(c->format, formats[i]) != 0)
			return fail(203, "child %d is %s:%s, want %s:%s", i, c && c->name ? c->name : "NULL",
			            c && c->format ? c->format : "NULL", names[i], formats[i]);
	}
	c = s->children[3];
	if (c->n_children != 1 || c->children == NULL || c->children[0] == NULL || c->children[0]->format == NULL ||
	    strcmp(c->children[0]->format, "i") != 0)
		return fail(204, "tags is not list<int32>");
	return 0;
}

static int st_leaf_ok(const struct ArrowArray *c, int64_t nbuf, int64_t need)
{
	return c != NULL && c->release != NULL && c->n_buffers == nbuf && c->buffers != NULL && c->offset >= 0 &&
	       c->length >= need;
}

/* st_check_batch checks batch b's values, honouring every offset; 0 or a
 * fail() code. */
static int st_check_batch(const struct ArrowArray *a, int64_t b)
{
	const struct ArrowArray *id, *name, *score, *tags, *items;
	const int64_t *idv;
	const double *sv;
	const int32_t *no, *to, *iv;
	const char *data;
	int64_t r, j, n = a->length, end = a->offset + a->length;
	int32_t lo, hi;
	char buf[64];
	int len;
	if (a->n_children != 4 || a->children == NULL || a->offset < 0 || n < 0)
		return fail(210, "batch %" PRId64 ": %" PRId64 " children, offset %" PRId64, b, a->n_children,
		            a->offset);
	id = a->children[0];
	name = a->children[1];
	score = a->children[2];
	tags = a->children[3];
	if (!st_leaf_ok(id, 2, end) || !st_leaf_ok(name, 3, end) || !st_leaf_ok(score, 2, end) ||
	    !st_leaf_ok(tags, 2, end) || tags->n_children != 1 || tags->children == NULL)
		return fail(211, "batch %" PRId64 ": malformed child", b);
	items = tags->children[0];
	if (items == NULL || items->release == NULL || items->n_buffers != 2 || items->buffers == NULL)
		return fail(212, "batch %" PRId64 ": malformed tags items", b);
	idv = id->buffers[1];
	no = name->buffers[1];
	data = name->buffers[2];
	sv = score->buffers[1];
	to = tags->buffers[1];
	iv = items->buffers[1];
	if (n > 0 && (idv == NULL || no == NULL || sv == NULL || to == NULL))
		return fail(213, "batch %" PRId64 ": NULL data buffer", b);
	for (r = 0; r < n; r++) {
		j = a->offset + r;
		if (!valid_at(id, j) || idv[id->offset + j] != b * 1000 + r)
			return fail(214, "batch %" PRId64 " row %" PRId64 ": id %" PRId64 ", want %" PRId64, b, r,
			            idv[id->offset + j], b * 1000 + r);
		if (valid_at(name, j) == st_name_null(r))
			return fail(215, "batch %" PRId64 " row %" PRId64 ": name validity wrong", b, r);
		if (!st_name_null(r)) {
			len = st_name(buf, sizeof buf, b, r);
			lo = no[name->offset + j];
			hi = no[name->offset + j + 1];
			if (hi - lo != len || (len > 0 && (data == NULL || memcmp(data + lo, buf, (size_t)len) != 0)))
				return fail(216, "batch %" PRId64 " row %" PRId64 ": name wrong, want %s", b, r, buf);
		}
		if (!valid_at(score, j) || sv[score->offset + j] != (double)r * 0.5)
			return fail(217, "batch %" PRId64 " row %" PRId64 ": score %g, want %g", b, r,
			            sv[score->offset + j], (double)r * 0.5);
		if (!valid_at(tags, j))
			return fail(218, "batch %" PRId64 " row %" PRId64 ": tags null", b, r);
		lo = to[tags->offset + j];
		hi = to[tags->offset + j + 1];
		if (hi - lo != (r % 2 == 0 ? 2 : 0))
			return fail(219, "batch %" PRId64 " row %" PRId64 ": %d tags", b, r, hi - lo);
		if (hi > lo && (iv == NULL || items->offset + hi > items->offset + items->length ||
		                iv[items->offset + lo] != r || iv[items->offset + lo + 1] != r + 1))
			return fail(220, "batch %" PRId64 " row %" PRId64 ": tags wrong", b, r);
	}
	return 0;
}

/* ---- producers ---------------------------------------------------------- */

struct st_producer {
	int64_t batches; /* < 0: never ends */
	int64_t rows;
	int fail_schema;
	int64_t fail_at; /* 1-based get_next call that fails; -1: none */
	int64_t empty;
	int64_t calls, made;
	int failed;
	char err[256];
};

static void st_producer_init(struct st_producer *p, int64_t batches, int64_t rows, int fail_schema,
                             int64_t fail_at, int64_t empty)
{
	memset(p, 0, sizeof *p);
	p->batches = batches;
	p->rows = rows;
	p->fail_schema = fail_schema;
	p->fail_at = fail_at;
	p->empty = empty;
	count_produced();
}

static int st_producer_schema(struct st_producer *p, struct ArrowSchema *out)
{
	if (p->fail_schema) {
		snprintf(p->err, sizeof p->err, "injected failure at get_schema");
		p->failed = 1;
		return EINVAL;
	}
	st_schema(out);
	return 0;
}

/* The gate: while shut, every get_next blocks (a producer waiting on a
 * network or a device), the way a consumer's context must not wait for. */
static pthread_mutex_t st_gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t st_gate_cv = PTHREAD_COND_INITIALIZER;
static int st_gate_shut, st_gate_blocked;

void st_gate(int shut)
{
	pthread_mutex_lock(&st_gate_mu);
	st_gate_shut = shut;
	pthread_cond_broadcast(&st_gate_cv);
	pthread_mutex_unlock(&st_gate_mu);
}

/* The number of get_next calls blocked at the gate now. */
intptr_t st_gate_blocked_calls(void)
{
	intptr_t n;
	pthread_mutex_lock(&st_gate_mu);
	n = st_gate_blocked;
	pthread_mutex_unlock(&st_gate_mu);
	return n;
}

static void st_gate_pass(void)
{
	pthread_mutex_lock(&st_gate_mu);
	st_gate_blocked++;
	while (st_gate_shut)
		pthread_cond_wait(&st_gate_cv, &st_gate_mu);
	st_gate_blocked--;
	pthread_mutex_unlock(&st_gate_mu);
}

/* st_producer_next fills out with the next batch, or marks it released at
 * the end; an injected failure sticks, as a real producer's would. */
static int st_producer_next(struct st_producer *p, struct ArrowArray *out)
{
	st_gate_pass();
	p->calls++;
	if (p->fail_at >= 0 && p->calls == p->fail_at) {
		snprintf(p->err, sizeof p->err, "injected failure at batch %" PRId64, p->fail_at);
		p->failed = 1;
	}
	if (p->failed)
		return EIO;
	if (p->batches >= 0 && p->made >= p->batches) {
		memset(out, 0, sizeof *out);
		return 0;
	}
	st_batch(out, p->made, p->empty ? 0 : p->rows);
	p->made++;
	return 0;
}

static const char *st_producer_error(struct st_producer *p) { return p->failed ? p->err : NULL; }

static void st_producer_free(struct st_producer *p)
{
	free(p);
	count_released();
}

/* Calls on a released stream are the consumer's bug: they get EINVAL and
 * this message instead of a crash, so a test can name the bug. */
static const char st_released_msg[] = "called on a released stream";

static int st_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
	return s->private_data ? st_producer_schema(s->private_data, out) : EINVAL;
}

static int st_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
	return s->private_data ? st_producer_next(s->private_data, out) : EINVAL;
}

static const char *st_get_last_error(struct ArrowArrayStream *s)
{
	return s->private_data ? st_producer_error(s->private_data) : st_released_msg;
}

static void st_release(struct ArrowArrayStream *s)
{
	st_producer_free(s->private_data);
	s->release = NULL;
	s->private_data = NULL;
}

/*
 * st_make_stream fills out with a stream of batches batches (< 0: endless)
 * of rows rows. fail_schema: get_schema fails with EINVAL; fail_at k >= 1:
 * the k-th get_next call fails with EIO, "injected failure at batch k", and
 * so does every later call; empty: every batch has 0 rows. Returns 0, or -1
 * for bad arguments.
 */
int st_make_stream(struct ArrowArrayStream *out, intptr_t batches, intptr_t rows, int fail_schema, intptr_t fail_at,
                   intptr_t empty)
{
	struct st_producer *p;
	if (out == NULL || rows < 0)
		return -1;
	p = xcalloc(1, sizeof *p);
	st_producer_init(p, batches, rows, fail_schema, fail_at, empty);
	out->get_schema = st_get_schema;
	out->get_next = st_get_next;
	out->get_last_error = st_get_last_error;
	out->release = st_release;
	out->private_data = p;
	return 0;
}

static int st_dev_get_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out)
{
	return s->private_data ? st_producer_schema(s->private_data, out) : EINVAL;
}

static int st_dev_get_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out)
{
	int rc;
	if (s->private_data == NULL)
		return EINVAL;
	memset(out, 0, sizeof *out);
	rc = st_producer_next(s->private_data, &out->array);
	out->device_id = -1;
	out->device_type = ARROW_DEVICE_CPU;
	out->sync_event = NULL;
	return rc;
}

static const char *st_dev_get_last_error(struct ArrowDeviceArrayStream *s)
{
	return s->private_data ? st_producer_error(s->private_data) : st_released_msg;
}

static void st_dev_release(struct ArrowDeviceArrayStream *s)
{
	st_producer_free(s->private_data);
	s->release = NULL;
	s->private_data = NULL;
}

/* st_make_device_stream_cpu: st_make_stream's batches as a CPU device stream
 * (device_id -1, sync_event NULL). */
int st_make_device_stream_cpu(struct ArrowDeviceArrayStream *out, intptr_t batches, intptr_t rows, intptr_t fail_at)
{
	struct st_producer *p;
	if (out == NULL || rows < 0)
		return -1;
	p = xcalloc(1, sizeof *p);
	st_producer_init(p, batches, rows, 0, fail_at, 0);
	out->device_type = ARROW_DEVICE_CPU;
	out->get_schema = st_dev_get_schema;
	out->get_next = st_dev_get_next;
	out->get_last_error = st_dev_get_last_error;
	out->release = st_dev_release;
	out->private_data = p;
	return 0;
}

/* ---- consumers of streams Go exported ----------------------------------- */

static char st_err[1024];

/* The message of the last failed st_drain*: the producer's get_last_error
 * text for a -errno result, a description for a mismatch. */
const char *st_last_error(void) { return st_err; }

/* A poisoned out struct: a producer that returns 0 without writing out
 * leaves this release, which must never run. */
static void st_poison_release(struct ArrowArray *a) { (void)a; }

static int64_t st_producer_failed(int rc, const char *msg, int64_t k)
{
	if (rc < 0) {
		fail(230, "negative code %d at batch %" PRId64, rc, k);
		snprintf(st_err, sizeof st_err, "%s", last_error);
		return -1000 - k;
	}
	snprintf(st_err, sizeof st_err, "%s", msg ? msg : "");
	return -(int64_t)rc;
}

static int64_t st_mismatch(int64_t k)
{
	snprintf(st_err, sizeof st_err, "%s", last_error);
	return -1000 - k;
}

/*
 * st_drain drains a record batch stream: get_schema (checked against
 * st_schema's shape), then get_next until the end, checking and releasing
 * each batch; after the end one more get_next must give another released
 * array and get_schema must still work. The stream is released in every
 * case. Returns the number of batches (*rows_out: rows in all), -errno from
 * the stream (message in st_last_error), or -1000-k for a mismatch at batch
 * k (k -1: the schema; k expect_batches: one batch more than expected, when
 * expect_batches >= 0).
 */
intptr_t st_drain(struct ArrowArrayStream *s, intptr_t expect_batches, int64_t *rows_out)
{
	struct ArrowSchema schema;
	struct ArrowArray a;
	int64_t k = 0, rows = 0, ret;
	int rc;
	st_err[0] = '\0';
	if (s == NULL || s->release == NULL) {
		snprintf(st_err, sizeof st_err, "NULL or released stream");
		return -999;
	}
	memset(&schema, 0, sizeof schema);
	if ((rc = s->get_schema(s, &schema)) != 0) {
		ret = st_producer_failed(rc, s->get_last_error(s), -1);
		goto out;
	}
	rc = st_check_schema(&schema);
	release_pair(&schema, NULL);
	if (rc != 0) {
		ret = st_mismatch(-1);
		goto out;
	}
	for (;;) {
		memset(&a, 0, sizeof a);
		a.release = st_poison_release;
		if ((rc = s->get_next(s, &a)) != 0) {
			ret = st_producer_failed(rc, s->get_last_error(s), k);
			goto out;
		}
		if (a.release == st_poison_release) {
			fail(231, "get_next returned 0 without writing out");
			ret = st_mismatch(k);
			goto out;
		}
		if (a.release == NULL)
			break;
		if (expect_batches >= 0 && k >= expect_batches) {
			release_pair(NULL, &a);
			fail(232, "more than %" PRId64 " batches", expect_batches);
			ret = st_mismatch(k);
			goto out;
		}
		rc = st_check_batch(&a, k);
		rows += a.length;
		if (rc == 0)
			rc = release_pair(NULL, &a);
		else
			release_pair(NULL, &a);
		if (rc != 0) {
			ret = st_mismatch(k);
			goto out;
		}
		k++;
	}
	memset(&a, 0, sizeof a);
	a.release = st_poison_release;
	rc = s->get_next(s, &a);
	if (rc != 0 || a.release != NULL) {
		fail(233, "get_next after the end: code %d, release %s", rc, a.release ? "set" : "NULL");
		if (rc == 0 && a.release != st_poison_release)
			release_pair(NULL, &a);
		ret = st_mismatch(k);
		goto out;
	}
	memset(&schema, 0, sizeof schema);
	if ((rc = s->get_schema(s, &schema)) != 0) {
		ret = st_producer_failed(rc, s->get_last_error(s), k);
		goto out;
	}
	release_pair(&schema, NULL);
	if (rows_out != NULL)
		*rows_out = rows;
	ret = k;
out:
	s->release(s);
	if (s->release != NULL && ret >= 0) {
		fail(234, "stream release did not set release to NULL");
		ret = st_mismatch(k);
	}
	return ret;
}

/*
 * st_drain_device_cpu is st_drain for a CPU device stream: device_type CPU
 * on the stream and on every batch, device_id -1, sync_event NULL.
 */
intptr_t st_drain_device_cpu(struct ArrowDeviceArrayStream *s, intptr_t expect_batches, int64_t *rows_out)
{
	struct ArrowSchema schema;
	struct ArrowDeviceArray da;
	int64_t k = 0, rows = 0, ret;
	int rc;
	st_err[0] = '\0';
	if (s == NULL || s->release == NULL) {
		snprintf(st_err, sizeof st_err, "NULL or released stream");
		return -999;
	}
	if (s->device_type != ARROW_DEVICE_CPU) {
		fail(240, "stream device_type %" PRId32 ", want 1", s->device_type);
		ret = st_mismatch(-1);
		goto out;
	}
	memset(&schema, 0, sizeof schema);
	if ((rc = s->get_schema(s, &schema)) != 0) {
		ret = st_producer_failed(rc, s->get_last_error(s), -1);
		goto out;
	}
	rc = st_check_schema(&schema);
	release_pair(&schema, NULL);
	if (rc != 0) {
		ret = st_mismatch(-1);
		goto out;
	}
	for (;; k++) {
		memset(&da, 0, sizeof da);
		da.array.release = st_poison_release;
		if ((rc = s->get_next(s, &da)) != 0) {
			ret = st_producer_failed(rc, s->get_last_error(s), k);
			goto out;
		}
		if (da.array.release == st_poison_release) {
			fail(241, "get_next returned 0 without writing out");
			ret = st_mismatch(k);
			goto out;
		}
		if (da.array.release == NULL)
			break;
		if (expect_batches >= 0 && k >= expect_batches)
			rc = fail(242, "more than %" PRId64 " batches", expect_batches);
		else if (da.device_type != ARROW_DEVICE_CPU || da.device_id != -1 || da.sync_event != NULL)
			rc = fail(243, "batch %" PRId64 ": device_type %" PRId32 ", device_id %" PRId64 ", sync_event %p",
			          k, da.device_type, da.device_id, da.sync_event);
		else
			rc = st_check_batch(&da.array, k);
		rows += da.array.length;
		if (rc == 0)
			rc = release_pair(NULL, &da.array);
		else
			release_pair(NULL, &da.array);
		if (rc != 0) {
			ret = st_mismatch(k);
			goto out;
		}
	}
	if (rows_out != NULL)
		*rows_out = rows;
	ret = k;
out:
	s->release(s);
	if (s->release != NULL && ret >= 0) {
		fail(244, "stream release did not set release to NULL");
		ret = st_mismatch(k);
	}
	return ret;
}

/* ---- thin wrappers: Go drives a stream through real C calls -------------- */

int st_get_schema_raw(struct ArrowArrayStream *s, struct ArrowSchema *out) { return s->get_schema(s, out); }

int st_get_next_raw(struct ArrowArrayStream *s, struct ArrowArray *out) { return s->get_next(s, out); }

const char *st_get_last_error_raw(struct ArrowArrayStream *s) { return s->get_last_error(s); }

void st_release_raw(struct ArrowArrayStream *s) { s->release(s); }

/* Releases an array through its own release callback, if it has one. */
void st_release_array(struct ArrowArray *a)
{
	if (a->release != NULL)
		a->release(a);
}

/* ---- concurrent misuse --------------------------------------------------- */

#define ST_MAX_BATCHES 65536

struct st_worker {
	pthread_t tid;
	struct ArrowArrayStream *s;
	int64_t calls, got;
	int first_rc;
	int64_t dup; /* first batch seen twice, or -1 */
	unsigned char *seen;
	int *go;
};

static void *st_worker_run(void *arg)
{
	struct st_worker *w = arg;
	struct ArrowArray a;
	const int64_t *id;
	int64_t i, b;
	int rc;
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < w->calls; i++) {
		memset(&a, 0, sizeof a);
		rc = w->s->get_next(w->s, &a);
		if (rc != 0) {
			if (w->first_rc == 0)
				w->first_rc = rc;
			continue;
		}
		if (a.release == NULL)
			continue;
		w->got++;
		b = -1;
		if (a.length > 0 && a.n_children == 4 && a.children[0]->buffers != NULL) {
			id = a.children[0]->buffers[1];
			b = id[a.children[0]->offset + a.offset] / 1000;
		}
		if (b < 0 || b >= ST_MAX_BATCHES || __atomic_exchange_n(&w->seen[b], 1, __ATOMIC_SEQ_CST) != 0)
			if (w->dup < 0)
				w->dup = b < 0 ? ST_MAX_BATCHES : b;
		a.release(&a);
	}
	return NULL;
}

/*
 * st_concurrent_get_next calls get_next calls_each times from each of
 * threads threads at once, releasing every batch (rows must be > 0: a batch
 * is known by its first id). Returns the number of batches received, -errno
 * for a failed call, or -1000-b when batch b arrived twice. The stream is
 * not released.
 */
intptr_t st_concurrent_get_next(struct ArrowArrayStream *s, int threads, intptr_t calls_each)
{
	struct st_worker *w;
	unsigned char *seen;
	int go = 0, i, started = 0, rc = 0;
	int64_t got = 0, dup = -1;
	if (s == NULL || threads <= 0 || calls_each < 0)
		return -999;
	w = xcalloc((size_t)threads, sizeof *w);
	seen = xcalloc(ST_MAX_BATCHES, 1);
	for (i = 0; i < threads; i++) {
		w[i].s = s;
		w[i].calls = calls_each;
		w[i].dup = -1;
		w[i].seen = seen;
		w[i].go = &go;
		if (pthread_create(&w[i].tid, NULL, st_worker_run, &w[i]) != 0)
			break;
		started++;
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		got += w[i].got;
		if (rc == 0)
			rc = w[i].first_rc;
		if (dup < 0)
			dup = w[i].dup;
	}
	free(w);
	free(seen);
	if (started < threads)
		return -999;
	if (dup >= 0)
		return -1000 - dup;
	if (rc != 0)
		return rc > 0 ? -rc : -999;
	return got;
}
