/*
 * The C side of the async package's tests: an async producer that drives a
 * Go ArrowAsyncDeviceStreamHandler from its own pthreads, and an async
 * consumer (a handler) that a Go producer drives, extracting tasks on its own
 * worker pthreads.
 *
 * Both sides use the same record batches: struct<id: int64, name: utf8>;
 * batch b row r has id b*1000+r and name "n<b>_<r>" (never null). The Go
 * tests build the same batches with arrow-go; keep them in step.
 *
 * cdata.c is included for its struct builders and counters: this library is
 * built and loaded on its own, so produced_count - released_count counts
 * exactly the schemas and arrays made here.
 *
 * Both sides watch the other for breaches of the protocol (the rules in the
 * comments of Arrow's abi.h for ArrowAsyncTask, ArrowAsyncProducer and
 * ArrowAsyncDeviceStreamHandler) and record them as "problems" instead of
 * crashing: as_problems/as_problem for the producer, as_consumer_problems/
 * as_consumer_problem for a consumer. A test passes only with none.
 *
 * No waiting spins: every wait is on a condition variable.
 */
#include "cdata.c"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/* ---- batches --------------------------------------------------------------- */

/* as_digits writes v (>= 0) in decimal at buf and returns its length. */
static int as_digits(char *buf, int64_t v)
{
	char tmp[20];
	int n = 0, i;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* as_name writes "n<b>_<r>" (b, r >= 0; cap >= 42) by hand: snprintf twice
 * per row made the producer, not the importer it feeds, the bottleneck. */
static int as_name(char *buf, size_t cap, int64_t b, int64_t r)
{
	int n = 0;
	(void)cap;
	buf[n++] = 'n';
	n += as_digits(buf + n, b);
	buf[n++] = '_';
	n += as_digits(buf + n, r);
	buf[n] = 0;
	return n;
}

/* as_schema: struct<id: int64, name: utf8>; bad: the name column gets the
 * unknown format "Q", which an importer must reject. */
static void as_schema(struct ArrowSchema *s, int bad)
{
	schema_init(s, "+s", "", 0, 2);
	schema_init(schema_kid(s, 0), "l", "id", 0, 0);
	schema_init(schema_kid(s, 1), bad ? "Q" : "u", "name", 0, 0);
}

static void as_batch(struct ArrowArray *a, int64_t b, int64_t rows)
{
	struct ArrowArray *id, *name;
	int64_t r, total = 0;
	int64_t *idv;
	int32_t *off;
	char *data;
	char buf[64];

	array_init(a, rows, 0, 1, 2);
	id = array_kid(a, 0);
	name = array_kid(a, 1);
	array_init(id, rows, 0, 2, 0);
	idv = array_buffer(id, 1, (size_t)rows * 8);
	for (r = 0; r < rows; r++) {
		idv[r] = b * 1000 + r;
		total += as_name(buf, sizeof buf, b, r);
	}
	array_init(name, rows, 0, 3, 0);
	off = array_buffer(name, 1, (size_t)(rows + 1) * 4);
	data = array_buffer(name, 2, (size_t)total + 1); /* +1: snprintf's NUL */
	total = 0;
	for (r = 0; r < rows; r++) {
		total += as_name(data + total, sizeof buf, b, r);
		off[r + 1] = (int32_t)total;
	}
}

/* as_meta encodes one key/value pair as a metadata blob (malloc'd). */
static char *as_meta(const char *key, int64_t v)
{
	char val[32];
	int32_t n = 1, klen = (int32_t)strlen(key), vlen;
	char *blob, *p;
	vlen = (int32_t)snprintf(val, sizeof val, "%" PRId64, v);
	blob = xcalloc(4 + 4 + (size_t)klen + 4 + (size_t)vlen, 1);
	p = blob;
	memcpy(p, &n, 4);
	p += 4;
	memcpy(p, &klen, 4);
	memcpy(p + 4, key, (size_t)klen);
	p += 4 + klen;
	memcpy(p, &vlen, 4);
	memcpy(p + 4, val, (size_t)vlen);
	return blob;
}

/* as_meta_find returns the value of key in a metadata blob as an integer, or
 * -1 when the blob is NULL or lacks the key. */
static int64_t as_meta_find(const char *blob, const char *key)
{
	int32_t n, i, klen, vlen;
	char val[32];
	const char *p = blob;
	if (blob == NULL)
		return -1;
	memcpy(&n, p, 4);
	p += 4;
	for (i = 0; i < n; i++) {
		memcpy(&klen, p, 4);
		p += 4;
		memcpy(&vlen, p + klen, 4);
		if ((size_t)klen == strlen(key) && memcmp(p, key, (size_t)klen) == 0 && vlen > 0 &&
		    (size_t)vlen < sizeof val) {
			memcpy(val, p + klen + 4, (size_t)vlen);
			val[vlen] = '\0';
			return strtoll(val, NULL, 10);
		}
		p += klen + 4 + vlen;
	}
	return -1;
}

/* ---- threads ----------------------------------------------------------------- */

static pthread_mutex_t as_glob = PTHREAD_MUTEX_INITIALIZER;
static pthread_t *as_threads; /* producer threads not yet joined */
static size_t as_nthreads, as_capthreads;

static void as_spawn(void *(*fn)(void *), void *arg)
{
	pthread_t tid;
	if (pthread_create(&tid, NULL, fn, arg) != 0)
		abort();
	pthread_mutex_lock(&as_glob);
	if (as_nthreads == as_capthreads) {
		as_capthreads = as_capthreads ? 2 * as_capthreads : 16;
		as_threads = realloc(as_threads, as_capthreads * sizeof *as_threads);
		if (as_threads == NULL)
			abort();
	}
	as_threads[as_nthreads++] = tid;
	pthread_mutex_unlock(&as_glob);
}

/* ---- producer-side counters and problems ---------------------------------------- */

static int64_t as_producers_live; /* producers whose handler release has not run */
static int64_t as_tasks_live;     /* tasks handed over and not yet extracted */
static int64_t as_n_discarded, as_n_extract, as_n_after_end, as_n_delivered, as_n_schema_rejected;
static int64_t as_n_problems;
static char as_problem_text[512];

static void as_problem(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&as_glob);
	if (as_n_problems++ == 0) {
		va_start(ap, fmt);
		vsnprintf(as_problem_text, sizeof as_problem_text, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&as_glob);
}

static int64_t as_load(int64_t *v) { return __atomic_load_n(v, __ATOMIC_SEQ_CST); }
static void as_add(int64_t *v, int64_t d) { __atomic_add_fetch(v, d, __ATOMIC_SEQ_CST); }

/* ---- the producer -------------------------------------------------------------- */

/*
 * A task's private data. Freed by as_wait once extracted, not by
 * extract_data, so that a second extract_data is reported instead of
 * reading freed memory.
 */
struct as_task {
	struct as_task *next; /* every task, for as_wait */
	int64_t b, rows;
	int extracted;         /* atomic */
	struct ArrowArray arr; /* built on the producer's thread, so extract_data
				  is cheap as the spec asks: it only moves it */
};

static struct as_task *as_all_tasks; /* under as_glob */

enum { AS_NONE, AS_SCHEMA, AS_BATCH, AS_END, AS_FAIL, AS_BAD };

struct as_prod {
	struct ArrowAsyncProducer pub; /* what handler->producer points at */
	struct as_prod *link;          /* every producer, for as_wait */
	struct ArrowAsyncDeviceStreamHandler *h;
	struct ArrowSchema schema;
	char *meta; /* additional_metadata */
	int64_t batches, rows, fail_at;
	int schema_fail;
	pthread_mutex_t mu; /* the state below; never held during a handler call */
	pthread_cond_t cv;
	int locked_calls;         /* see as_set_locked_calls */
	pthread_mutex_t call_mu; /* recursive; held around handler calls when locked_calls */
	int threads_left;
	int64_t credits, next; /* next: the next batch to hand over */
	int schema_sent;
	int busy;   /* a thread is calling the handler */
	int done;   /* no more handler calls but release */
	int cancelled, bad_request, ended, released;
	int64_t bad_n;
};

static struct as_prod *as_all_prods; /* under as_glob */

static int as_locked_calls; /* atomic */

/*
 * as_set_locked_calls(1) makes the producers started from now on hold a
 * recursive mutex of theirs around every handler call, and take it in
 * request and cancel too. That is a legal design (request from within a
 * callback, on the same thread, still works), common in producers that
 * serialize everything with one lock; a handler that holds a lock of its
 * own while it calls request or cancel deadlocks against it.
 */
void as_set_locked_calls(int on) { __atomic_store_n(&as_locked_calls, on, __ATOMIC_SEQ_CST); }

static int as_extract(struct ArrowAsyncTask *t, struct ArrowDeviceArray *out)
{
	struct as_task *k;
	as_add(&as_n_extract, 1);
	if (t == NULL || (k = t->private_data) == NULL) {
		as_problem("extract_data with a NULL task or NULL private_data");
		return EINVAL;
	}
	if (__atomic_exchange_n(&k->extracted, 1, __ATOMIC_SEQ_CST) != 0) {
		as_problem("extract_data called twice for batch %" PRId64, k->b);
		return EINVAL;
	}
	as_add(&as_tasks_live, -1);
	if (out == NULL) {
		as_add(&as_n_discarded, 1);
		k->arr.release(&k->arr);
		return 0;
	}
	memset(out, 0, sizeof *out);
	out->array = k->arr; /* moved */
	k->arr.release = NULL;
	out->device_id = -1;
	out->device_type = ARROW_DEVICE_CPU;
	out->sync_event = NULL;
	return 0;
}

static struct as_prod *as_prod_of(struct ArrowAsyncProducer *self, const char *what)
{
	if (self == NULL || self->private_data == NULL) {
		as_problem("%s on a NULL producer", what);
		return NULL;
	}
	return self->private_data;
}

/* request adds credits and wakes the threads; it never calls the handler. */
static void as_request(struct ArrowAsyncProducer *self, int64_t n)
{
	struct as_prod *p = as_prod_of(self, "request");
	if (p == NULL)
		return;
	if (p->locked_calls)
		pthread_mutex_lock(&p->call_mu);
	pthread_mutex_lock(&p->mu);
	if (p->released) {
		pthread_mutex_unlock(&p->mu);
		if (p->locked_calls)
			pthread_mutex_unlock(&p->call_mu);
		as_problem("request(%" PRId64 ") after the handler's release returned", n);
		return;
	}
	if (p->ended)
		as_add(&as_n_after_end, 1);
	if (n <= 0) {
		if (!p->cancelled && !p->done && !p->bad_request) {
			p->bad_request = 1;
			p->bad_n = n;
		}
	} else if (!p->cancelled && p->credits < INT64_MAX / 2) {
		p->credits += n;
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->locked_calls)
		pthread_mutex_unlock(&p->call_mu);
}

static void as_cancel(struct ArrowAsyncProducer *self)
{
	struct as_prod *p = as_prod_of(self, "cancel");
	if (p == NULL)
		return;
	if (p->locked_calls)
		pthread_mutex_lock(&p->call_mu);
	pthread_mutex_lock(&p->mu);
	if (p->released)
		as_problem("cancel after the handler's release returned");
	else
		p->cancelled = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->locked_calls)
		pthread_mutex_unlock(&p->call_mu);
}

/* Whether the thread holding the turn has something to do. */
static int as_prod_ready(const struct as_prod *p)
{
	return !p->schema_sent || p->cancelled || p->bad_request || p->next == p->fail_at || p->credits > 0;
}

/* as_prod_act makes one handler call (p->mu not held); its return value is
 * the handler's, 0 for on_error. */
static int as_prod_act(struct as_prod *p, int action, int64_t b)
{
	struct ArrowAsyncDeviceStreamHandler *h = p->h;
	struct ArrowAsyncTask t;
	struct as_task *k;
	char msg[128], *meta;
	int rc = 0;
	switch (action) {
	case AS_SCHEMA:
		as_schema(&p->schema, p->schema_fail);
		rc = h->on_schema(h, &p->schema);
		if (p->schema.release != NULL) {
			as_problem("on_schema returned %d without releasing or moving the schema", rc);
			p->schema.release(&p->schema);
		}
		if (rc != 0)
			as_add(&as_n_schema_rejected, 1);
		break;
	case AS_BATCH:
		k = xcalloc(1, sizeof *k);
		k->b = b;
		k->rows = p->rows;
		as_batch(&k->arr, b, p->rows);
		pthread_mutex_lock(&as_glob);
		k->next = as_all_tasks;
		as_all_tasks = k;
		pthread_mutex_unlock(&as_glob);
		as_add(&as_tasks_live, 1);
		as_add(&as_n_delivered, 1);
		t.extract_data = as_extract;
		t.private_data = k;
		meta = as_meta("batch", b);
		rc = h->on_next_task(h, &t, meta);
		free(meta);
		/* Refused: the task stays ours, unless the handler extracted it. */
		if (rc != 0 && __atomic_exchange_n(&k->extracted, 1, __ATOMIC_SEQ_CST) == 0) {
			as_add(&as_tasks_live, -1);
			k->arr.release(&k->arr);
		}
		/* The task struct is only valid during the call. */
		t.extract_data = NULL;
		t.private_data = NULL;
		break;
	case AS_END:
		rc = h->on_next_task(h, NULL, NULL);
		break;
	case AS_FAIL:
		snprintf(msg, sizeof msg, "injected failure at batch %" PRId64, b);
		h->on_error(h, EIO, msg, NULL);
		break;
	case AS_BAD:
		snprintf(msg, sizeof msg, "request(%" PRId64 "): n must be positive", p->bad_n);
		h->on_error(h, EINVAL, msg, NULL);
		break;
	}
	return rc;
}

/* as_prod_finish runs on the last thread out: release, last of all. */
static void as_prod_finish(struct as_prod *p)
{
	p->h->release(p->h);
	pthread_mutex_lock(&p->mu);
	p->released = 1; /* freed by as_wait; later calls are reported */
	pthread_mutex_unlock(&p->mu);
	as_add(&as_producers_live, -1);
}

/*
 * Each producer thread waits for its turn and for something to do; the
 * thread with the turn makes one handler call, so calls never overlap and
 * go out in order, while successive calls come from different threads.
 */
static void *as_prod_run(void *arg)
{
	struct as_prod *p = arg;
	int action, rc, last;
	int64_t b;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->done && (p->busy || !as_prod_ready(p)))
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->done)
			break;
		p->busy = 1;
		b = p->next;
		if (!p->schema_sent) {
			action = AS_SCHEMA;
			p->schema_sent = 1;
		} else if (p->cancelled) {
			action = AS_NONE; /* cancelled: release without on_error */
			p->done = 1;
		} else if (p->bad_request) {
			action = AS_BAD;
			p->done = 1;
		} else if (p->next == p->fail_at) {
			action = AS_FAIL;
			p->done = 1;
		} else if (p->next >= p->batches) {
			action = AS_END;
			p->credits--;
			p->ended = 1; /* requests from now on count as after the end */
			p->done = 1;
		} else {
			action = AS_BATCH;
			p->next++;
			p->credits--;
		}
		pthread_mutex_unlock(&p->mu);
		if (p->locked_calls)
			pthread_mutex_lock(&p->call_mu);
		rc = as_prod_act(p, action, b);
		if (p->locked_calls)
			pthread_mutex_unlock(&p->call_mu);
		pthread_mutex_lock(&p->mu);
		if (rc != 0)
			p->done = 1; /* the handler refused: only release is left */
		p->busy = 0;
		pthread_cond_broadcast(&p->cv);
	}
	last = --p->threads_left == 0;
	pthread_mutex_unlock(&p->mu);
	if (last)
		as_prod_finish(p);
	return NULL;
}

/*
 * as_produce drives h from threads pthreads of its own and returns at once.
 * It populates h->producer (device_type, additional_metadata
 * {"total_batches": "<batches>"}), then a producer thread calls on_schema
 * with struct<id: int64, name: utf8> (schema_fail: the name column has the
 * unknown format "Q", which the handler must reject); then, as far as the
 * handler has requested, on_next_task with batch b's task (metadata
 * {"batch": "<b>"}, rows rows), on_next_task(NULL) after the last one (it
 * too waits for a requested slot), and release. fail_at k >= 0:
 * on_error(EIO, "injected failure at batch k") as soon as batch k is next
 * (requested or not), instead of batch k, then release. request(n <= 0): on_error(EINVAL) from
 * a producer thread, then release. cancel: release without on_error.
 * A non-zero return from on_schema or on_next_task: release only (a
 * refused task stays the producer's, unless the handler extracted it).
 * device_type goes into the producer struct; the arrays are CPU arrays
 * (device_id -1, sync_event NULL) whatever it says.
 * Returns 0, or -1 for bad arguments.
 */
int as_produce(struct ArrowAsyncDeviceStreamHandler *h, intptr_t batches, intptr_t rows, int threads, intptr_t fail_at,
               int schema_fail, intptr_t device_type)
{
	struct as_prod *p;
	pthread_mutexattr_t attr;
	int i;
	if (h == NULL || batches < 0 || rows < 0)
		return -1;
	if (threads < 1)
		threads = 1;
	p = xcalloc(1, sizeof *p);
	p->h = h;
	p->batches = batches;
	p->rows = rows;
	p->fail_at = fail_at < 0 ? -1 : fail_at;
	p->schema_fail = schema_fail;
	p->threads_left = threads;
	p->meta = as_meta("total_batches", batches);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&p->call_mu, &attr);
	pthread_mutexattr_destroy(&attr);
	p->locked_calls = __atomic_load_n(&as_locked_calls, __ATOMIC_SEQ_CST);
	p->pub.device_type = (ArrowDeviceType)device_type;
	p->pub.request = as_request;
	p->pub.cancel = as_cancel;
	p->pub.additional_metadata = p->meta;
	p->pub.private_data = p;
	h->producer = &p->pub; /* before any callback */
	as_add(&as_producers_live, 1);
	pthread_mutex_lock(&as_glob);
	p->link = as_all_prods;
	as_all_prods = p;
	pthread_mutex_unlock(&as_glob);
	for (i = 0; i < threads; i++)
		as_spawn(as_prod_run, p);
	return 0;
}

/*
 * as_wait joins every producer thread started so far, then frees the
 * producers (all released by then) and the tasks already extracted.
 * Returns 0.
 */
int as_wait(void)
{
	pthread_t tid;
	struct as_prod *p, *pkeep = NULL, *pn;
	struct as_task *k, *kkeep = NULL, *kn;
	for (;;) {
		pthread_mutex_lock(&as_glob);
		if (as_nthreads == 0) {
			pthread_mutex_unlock(&as_glob);
			break;
		}
		tid = as_threads[--as_nthreads];
		pthread_mutex_unlock(&as_glob);
		pthread_join(tid, NULL);
	}
	pthread_mutex_lock(&as_glob);
	for (p = as_all_prods; p != NULL; p = pn) {
		pn = p->link;
		if (!p->released) { /* cannot happen once its threads are joined */
			p->link = pkeep;
			pkeep = p;
			continue;
		}
		pthread_mutex_destroy(&p->mu);
		pthread_mutex_destroy(&p->call_mu);
		pthread_cond_destroy(&p->cv);
		free(p->meta);
		free(p);
	}
	as_all_prods = pkeep;
	for (k = as_all_tasks; k != NULL; k = kn) {
		kn = k->next;
		if (!__atomic_load_n(&k->extracted, __ATOMIC_SEQ_CST)) {
			k->next = kkeep;
			kkeep = k;
			continue;
		}
		free(k);
	}
	as_all_tasks = kkeep;
	pthread_mutex_unlock(&as_glob);
	return 0;
}

/* Producers not yet released, tasks not yet extracted, and schema and
 * array structs (children included) not yet released. */
intptr_t as_live(void)
{
	return as_load(&as_producers_live) + as_load(&as_tasks_live) + __atomic_load_n(&produced_count, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&released_count, __ATOMIC_SEQ_CST);
}

intptr_t as_tasks_discarded(void) { return as_load(&as_n_discarded); }
intptr_t as_extract_calls(void) { return as_load(&as_n_extract); }
intptr_t as_requests_after_end(void) { return as_load(&as_n_after_end); }
intptr_t as_tasks_delivered(void) { return as_load(&as_n_delivered); }
intptr_t as_schema_rejections(void) { return as_load(&as_n_schema_rejected); }

/* Protocol breaches the producer saw, and the first one's description. */
intptr_t as_problems(void)
{
	int64_t n;
	pthread_mutex_lock(&as_glob);
	n = as_n_problems;
	pthread_mutex_unlock(&as_glob);
	return n;
}

const char *as_problem_message(void) { return as_problem_text; }

/* as_reset waits for every producer thread, then zeroes the event counters
 * and the problems (not the live counts). */
void as_reset(void)
{
	as_wait();
	as_set_locked_calls(0);
	__atomic_store_n(&as_n_discarded, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&as_n_extract, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&as_n_after_end, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&as_n_delivered, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&as_n_schema_rejected, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&as_glob);
	as_n_problems = 0;
	as_problem_text[0] = '\0';
	pthread_mutex_unlock(&as_glob);
}

/* ---- the consumer --------------------------------------------------------------- */

/* A task copied out of on_next_task, with its batch number. */
struct as_ctask {
	struct ArrowAsyncTask t;
	int64_t b;
};

struct as_consumer {
	struct ArrowAsyncDeviceStreamHandler h; /* handed to the producer */
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* workers wait here for tasks */
	pthread_cond_t done_cv; /* release and as_consumer_wait wait here */
	int64_t chunk, cancel_after, fail_task;
	int fail_schema, bad_request;
	int nworkers;
	pthread_t *workers;
	struct ArrowAsyncProducer *prod; /* seen at on_schema */
	struct as_ctask *q;              /* ring buffer of tasks */
	size_t qcap, qhead, qlen;
	int busy;     /* workers handling a task */
	int in_calls; /* request/cancel calls in flight from workers */
	int inside;   /* atomic: a handler callback is running */
	int stop;     /* workers exit (as_consumer_free) */
	int64_t received, processed, checked, discarded, rows, requested, refills, total_meta;
	int saw_schema, saw_end, cancelled, refused;
	int64_t releases;
	int error_code;
	char error_msg[512];
	int64_t problems;
	char problem[512];
};

/* Set while this thread calls the producer's request or cancel: a handler
 * callback arriving then was called synchronously, which the spec forbids
 * (on_schema's own request call excepted). */
static __thread struct as_consumer *as_tls_calling;

/* as_record_problem counts a breach and keeps the first one's text. */
static void as_record_problem(int64_t *n, char *buf, size_t cap, const char *fmt, va_list ap)
{
	if ((*n)++ == 0)
		vsnprintf(buf, cap, fmt, ap);
}

/* as_cproblem records a breach; c->mu held. */
static void as_cproblem(struct as_consumer *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	as_record_problem(&c->problems, c->problem, sizeof c->problem, fmt, ap);
	va_end(ap);
}

/* as_enter/as_leave bracket every handler callback (c->mu not held). */
static void as_enter(struct as_consumer *c, const char *what)
{
	int overlap = __atomic_exchange_n(&c->inside, 1, __ATOMIC_SEQ_CST);
	if (overlap || as_tls_calling == c) {
		pthread_mutex_lock(&c->mu);
		if (overlap)
			as_cproblem(c, "%s overlaps another handler callback", what);
		if (as_tls_calling == c)
			as_cproblem(c, "%s called synchronously from request or cancel", what);
		pthread_mutex_unlock(&c->mu);
	}
}

static void as_leave(struct as_consumer *c) { __atomic_store_n(&c->inside, 0, __ATOMIC_SEQ_CST); }

static struct as_consumer *as_consumer_of(struct ArrowAsyncDeviceStreamHandler *h)
{
	return h != NULL ? h->private_data : NULL;
}

/* as_why writes why a check failed and returns 1. */
static int as_why(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return 1;
}

/* as_check_schema: struct<id: int64, name: utf8>; 0 or non-zero with why. */
static int as_check_schema(const struct ArrowSchema *s, char *why, size_t cap)
{
	const struct ArrowSchema *id, *name;
	if (s == NULL || s->release == NULL)
		return as_why(why, cap, "on_schema got a NULL or released schema");
	if (s->format == NULL || strcmp(s->format, "+s") != 0 || s->n_children != 2 || s->children == NULL)
		return as_why(why, cap, "schema is %s with %" PRId64 " children, want +s with 2",
		                s->format ? s->format : "NULL", s->n_children);
	id = s->children[0];
	name = s->children[1];
	if (id == NULL || id->format == NULL || id->name == NULL || strcmp(id->format, "l") != 0 ||
	    strcmp(id->name, "id") != 0 || name == NULL || name->format == NULL || name->name == NULL ||
	    strcmp(name->format, "u") != 0 || strcmp(name->name, "name") != 0)
		return as_why(why, cap, "schema children are not id: int64, name: utf8");
	return 0;
}

/* as_check_batch checks batch b (every offset honoured); 0 or non-zero with why. */
static int as_check_batch(const struct ArrowDeviceArray *da, int64_t b, char *why, size_t cap)
{
	const struct ArrowArray *a = &da->array, *id, *name;
	const int64_t *idv;
	const int32_t *no;
	const char *data;
	int64_t r, j, end;
	int32_t lo, hi;
	char buf[64];
	int len;
	if (da->device_type != ARROW_DEVICE_CPU || da->device_id != -1 || da->sync_event != NULL)
		return as_why(why, cap, "batch %" PRId64 ": device_type %d, device_id %" PRId64 ", sync_event %p", b,
		                (int)da->device_type, da->device_id, da->sync_event);
	if (a->release == NULL || a->n_children != 2 || a->children == NULL || a->offset < 0 || a->length < 0)
		return as_why(why, cap, "batch %" PRId64 ": malformed struct array", b);
	end = a->offset + a->length;
	id = a->children[0];
	name = a->children[1];
	if (id == NULL || name == NULL || id->n_buffers != 2 || name->n_buffers != 3 || id->buffers == NULL ||
	    name->buffers == NULL || id->length < end || name->length < end || id->offset < 0 || name->offset < 0)
		return as_why(why, cap, "batch %" PRId64 ": malformed child", b);
	idv = id->buffers[1];
	no = name->buffers[1];
	data = name->buffers[2];
	if (a->length > 0 && (idv == NULL || no == NULL))
		return as_why(why, cap, "batch %" PRId64 ": NULL data buffer", b);
	for (r = 0; r < a->length; r++) {
		j = a->offset + r;
		if (!valid_at(id, j) || idv[id->offset + j] != b * 1000 + r)
			return as_why(why, cap, "batch %" PRId64 " row %" PRId64 ": id %" PRId64 ", want %" PRId64, b, r,
			                idv[id->offset + j], b * 1000 + r);
		len = as_name(buf, sizeof buf, b, r);
		lo = no[name->offset + j];
		hi = no[name->offset + j + 1];
		if (!valid_at(name, j) || hi - lo != len ||
		    (len > 0 && (data == NULL || memcmp(data + lo, buf, (size_t)len) != 0)))
			return as_why(why, cap, "batch %" PRId64 " row %" PRId64 ": name wrong, want %s", b, r, buf);
	}
	return 0;
}

/* as_call_producer calls request(n) (cancel when n == 0) from a worker with
 * c->mu held on entry and exit; release waits for it to return. */
static void as_call_producer(struct as_consumer *c, int cancel, int64_t n)
{
	struct ArrowAsyncProducer *p = c->prod;
	c->in_calls++;
	pthread_mutex_unlock(&c->mu);
	as_tls_calling = c;
	if (cancel)
		p->cancel(p);
	else
		p->request(p, n);
	as_tls_calling = NULL;
	pthread_mutex_lock(&c->mu);
	c->in_calls--;
	pthread_cond_broadcast(&c->done_cv);
}

static int as_on_schema(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowSchema *s)
{
	struct as_consumer *c = as_consumer_of(h);
	struct ArrowAsyncProducer *p;
	char why[256];
	int64_t n;
	as_enter(c, "on_schema");
	pthread_mutex_lock(&c->mu);
	if (c->saw_schema)
		as_cproblem(c, "on_schema called twice");
	if (c->releases > 0)
		as_cproblem(c, "on_schema after release");
	c->saw_schema = 1;
	p = h->producer;
	if (p == NULL)
		as_cproblem(c, "handler->producer not populated before on_schema");
	else if (p->device_type != ARROW_DEVICE_CPU)
		as_cproblem(c, "producer device_type %d, want 1", (int)p->device_type);
	c->prod = p;
	if (p != NULL)
		c->total_meta = as_meta_find(p->additional_metadata, "total_batches");
	if (as_check_schema(s, why, sizeof why) != 0)
		as_cproblem(c, "%s", why);
	if (s != NULL && s->release != NULL) {
		s->release(s);
		if (s->release != NULL)
			as_cproblem(c, "schema release did not set release to NULL");
	}
	if (c->fail_schema || p == NULL) {
		c->refused = 1;
		pthread_mutex_unlock(&c->mu);
		as_leave(c);
		return EINVAL;
	}
	n = c->bad_request ? 0 : c->chunk;
	c->requested += n;
	c->in_calls++;
	pthread_mutex_unlock(&c->mu);
	/* Allowed synchronously from on_schema. */
	p->request(p, n);
	pthread_mutex_lock(&c->mu);
	c->in_calls--;
	pthread_cond_broadcast(&c->done_cv);
	pthread_mutex_unlock(&c->mu);
	as_leave(c);
	return 0;
}

static int as_on_next_task(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowAsyncTask *task, const char *meta)
{
	struct as_consumer *c = as_consumer_of(h);
	struct as_ctask *nq;
	size_t i;
	(void)meta;
	as_enter(c, "on_next_task");
	pthread_mutex_lock(&c->mu);
	if (!c->saw_schema)
		as_cproblem(c, "on_next_task before on_schema");
	if (c->releases > 0)
		as_cproblem(c, "on_next_task after release");
	if (c->refused)
		as_cproblem(c, "on_next_task after the handler returned non-zero");
	if (c->saw_end)
		as_cproblem(c, "on_next_task after the end of the stream");
	if (task == NULL) {
		c->saw_end = 1;
		pthread_cond_broadcast(&c->done_cv);
		pthread_mutex_unlock(&c->mu);
		as_leave(c);
		return 0;
	}
	c->received++;
	if (c->received > c->requested)
		as_cproblem(c, "task %" PRId64 " beyond the %" PRId64 " requested", c->received, c->requested);
	if (task->extract_data == NULL)
		as_cproblem(c, "task %" PRId64 " has no extract_data", c->received);
	if (c->fail_task == c->received || task->extract_data == NULL) {
		/* Refused: the task stays the producer's. */
		c->refused = 1;
		pthread_mutex_unlock(&c->mu);
		as_leave(c);
		return EINVAL;
	}
	if (c->qlen == c->qcap) {
		nq = xcalloc(c->qcap ? 2 * c->qcap : 16, sizeof *nq);
		for (i = 0; i < c->qlen; i++)
			nq[i] = c->q[(c->qhead + i) % c->qcap];
		free(c->q);
		c->q = nq;
		c->qhead = 0;
		c->qcap = c->qcap ? 2 * c->qcap : 16;
	}
	/* The task is valid only during this call: copy it. */
	c->q[(c->qhead + c->qlen) % c->qcap].t = *task;
	c->q[(c->qhead + c->qlen) % c->qcap].b = c->received - 1;
	c->qlen++;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	as_leave(c);
	return 0;
}

static void as_on_error(struct ArrowAsyncDeviceStreamHandler *h, int code, const char *msg, const char *meta)
{
	struct as_consumer *c = as_consumer_of(h);
	(void)meta;
	as_enter(c, "on_error");
	pthread_mutex_lock(&c->mu);
	if (c->refused)
		as_cproblem(c, "on_error(%d) after the handler returned non-zero", code);
	if (c->releases > 0)
		as_cproblem(c, "on_error(%d) after release", code);
	if (c->error_code != 0)
		as_cproblem(c, "on_error called twice");
	if (code == 0)
		as_cproblem(c, "on_error with code 0");
	c->error_code = code;
	snprintf(c->error_msg, sizeof c->error_msg, "%s", msg ? msg : "");
	pthread_mutex_unlock(&c->mu);
	as_leave(c);
}

static void as_on_release(struct ArrowAsyncDeviceStreamHandler *h)
{
	struct as_consumer *c = as_consumer_of(h);
	as_enter(c, "release");
	pthread_mutex_lock(&c->mu);
	if (c->releases++ > 0)
		as_cproblem(c, "release called twice");
	/* The producer frees itself once this returns: wait for the calls into
	 * it that workers have in flight (none start from now on). */
	while (c->in_calls > (as_tls_calling == c ? 1 : 0))
		pthread_cond_wait(&c->done_cv, &c->mu);
	c->prod = NULL;
	pthread_cond_broadcast(&c->done_cv);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	as_leave(c);
}

/*
 * A worker extracts queued tasks (with a NULL out after cancel: discarded),
 * checks and releases the batches, cancels after cancel_after tasks, and
 * when every requested task has been handled requests more, alternating
 * chunk, 1, chunk, chunk, 1, ... — never after the end, release, an error,
 * a refusal or cancel.
 */
static void *as_worker(void *arg)
{
	struct as_consumer *c = arg;
	struct as_ctask t;
	struct ArrowDeviceArray da;
	char why[256];
	int discard, rc, bad;
	int64_t n, len = 0;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->qlen == 0 && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->qlen == 0)
			break;
		t = c->q[c->qhead];
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		c->busy++;
		discard = c->cancelled;
		pthread_mutex_unlock(&c->mu);
		bad = 0;
		why[0] = '\0';
		if (discard) {
			rc = t.t.extract_data(&t.t, NULL);
		} else {
			memset(&da, 0, sizeof da);
			rc = t.t.extract_data(&t.t, &da);
			if (rc == 0) {
				len = da.array.length; /* a release may zero the struct */
				bad = as_check_batch(&da, t.b, why, sizeof why);
				if (da.array.release == NULL) {
					if (!bad)
						bad = as_why(why, sizeof why, "batch %" PRId64 ": extracted a released array", t.b);
				} else {
					da.array.release(&da.array);
					if (da.array.release != NULL && !bad)
						bad = as_why(why, sizeof why, "batch %" PRId64 ": release did not NULL itself", t.b);
				}
			}
		}
		pthread_mutex_lock(&c->mu);
		c->busy--;
		c->processed++;
		if (rc != 0)
			as_cproblem(c, "extract_data of batch %" PRId64 " returned %d", t.b, rc);
		else if (bad)
			as_cproblem(c, "%s", why);
		else if (discard)
			c->discarded++;
		else {
			c->checked++;
			c->rows += len;
		}
		if (c->releases == 0 && c->prod != NULL && !c->cancelled && c->cancel_after > 0 &&
		    c->processed >= c->cancel_after) {
			c->cancelled = 1;
			as_call_producer(c, 1, 0);
		} else if (c->releases == 0 && c->prod != NULL && !c->cancelled && !c->saw_end && !c->refused &&
		           c->error_code == 0 && c->processed == c->requested) {
			n = c->refills++ % 3 == 1 ? 1 : c->chunk;
			c->requested += n;
			as_call_producer(c, 0, n);
		}
		pthread_cond_broadcast(&c->done_cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/*
 * as_consumer_new makes a consumer whose handler requests request_chunk
 * tasks at on_schema, extracts them on threads worker pthreads, and cancels
 * after cancel_after tasks (>= 1; -1: never).
 */
struct as_consumer *as_consumer_new(intptr_t request_chunk, intptr_t cancel_after, int threads)
{
	struct as_consumer *c;
	int i;
	if (request_chunk < 1)
		return NULL;
	if (threads < 1)
		threads = 1;
	c = xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	c->chunk = request_chunk;
	c->cancel_after = cancel_after;
	c->fail_task = -1;
	c->total_meta = -1;
	c->h.on_schema = as_on_schema;
	c->h.on_next_task = as_on_next_task;
	c->h.on_error = as_on_error;
	c->h.release = as_on_release;
	c->h.producer = NULL;
	c->h.private_data = c;
	c->nworkers = threads;
	c->workers = xcalloc((size_t)threads, sizeof *c->workers);
	for (i = 0; i < threads; i++)
		if (pthread_create(&c->workers[i], NULL, as_worker, c) != 0)
			abort();
	return c;
}

struct ArrowAsyncDeviceStreamHandler *as_consumer_handler(struct as_consumer *c) { return &c->h; }

/* on_schema returns EINVAL (after releasing the schema). */
void as_consumer_fail_on_schema(struct as_consumer *c)
{
	pthread_mutex_lock(&c->mu);
	c->fail_schema = 1;
	pthread_mutex_unlock(&c->mu);
}

/* The k-th (1-based) on_next_task with a task returns EINVAL, leaving the
 * task unextracted (it stays the producer's). */
void as_consumer_fail_on_task(struct as_consumer *c, intptr_t k)
{
	pthread_mutex_lock(&c->mu);
	c->fail_task = k;
	pthread_mutex_unlock(&c->mu);
}

/* on_schema calls request(0) instead of request(chunk). */
void as_consumer_request_bad(struct as_consumer *c)
{
	pthread_mutex_lock(&c->mu);
	c->bad_request = 1;
	pthread_mutex_unlock(&c->mu);
}

static int as_consumer_settled(const struct as_consumer *c)
{
	return c->releases > 0 && c->qlen == 0 && c->busy == 0 && c->in_calls == 0;
}

/* as_wait_until waits on cv under mu, up to timeout_ms, until done(arg);
 * 0, or ETIMEDOUT. */
static int as_wait_until(pthread_mutex_t *mu, pthread_cond_t *cv, int (*done)(const void *), const void *arg,
			 intptr_t timeout_ms)
{
	struct timespec ts;
	int ok;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(timeout_ms / 1000);
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(mu);
	while (!done(arg))
		if (pthread_cond_timedwait(cv, mu, &ts) == ETIMEDOUT)
			break;
	ok = done(arg);
	pthread_mutex_unlock(mu);
	return ok ? 0 : ETIMEDOUT;
}

/* as_locked_get reads *field under mu. */
static int64_t as_locked_get(pthread_mutex_t *mu, const int64_t *field)
{
	int64_t v;
	pthread_mutex_lock(mu);
	v = *field;
	pthread_mutex_unlock(mu);
	return v;
}

static int as_consumer_settled_arg(const void *c) { return as_consumer_settled(c); }

/* as_consumer_wait waits up to timeout_ms for release and for the workers to
 * finish every task; 0, or ETIMEDOUT. */
int as_consumer_wait(struct as_consumer *c, intptr_t timeout_ms)
{
	return as_wait_until(&c->mu, &c->done_cv, as_consumer_settled_arg, c, timeout_ms);
}

static int64_t as_consumer_get(struct as_consumer *c, const int64_t *field) { return as_locked_get(&c->mu, field); }

/* Batches extracted and checked (not those discarded after cancel). */
intptr_t as_consumer_batches(struct as_consumer *c) { return as_consumer_get(c, &c->checked); }
intptr_t as_consumer_rows(struct as_consumer *c) { return as_consumer_get(c, &c->rows); }
intptr_t as_consumer_discarded(struct as_consumer *c) { return as_consumer_get(c, &c->discarded); }
intptr_t as_consumer_received(struct as_consumer *c) { return as_consumer_get(c, &c->received); }
intptr_t as_consumer_releases(struct as_consumer *c) { return as_consumer_get(c, &c->releases); }
intptr_t as_consumer_problems(struct as_consumer *c) { return as_consumer_get(c, &c->problems); }
/* The producer's additional_metadata "total_batches", or -1. */
intptr_t as_consumer_total_batches(struct as_consumer *c) { return as_consumer_get(c, &c->total_meta); }

int as_consumer_error_code(struct as_consumer *c)
{
	int v;
	pthread_mutex_lock(&c->mu);
	v = c->error_code;
	pthread_mutex_unlock(&c->mu);
	return v;
}

int as_consumer_saw_end(struct as_consumer *c)
{
	int v;
	pthread_mutex_lock(&c->mu);
	v = c->saw_end;
	pthread_mutex_unlock(&c->mu);
	return v;
}

/* Valid once as_consumer_wait returned 0. */
const char *as_consumer_error_message(struct as_consumer *c) { return c->error_msg; }
const char *as_consumer_problem(struct as_consumer *c) { return c->problem; }

/* as_consumer_free stops the workers and frees c; a consumer not yet
 * settled (the producer may still call it) is left alone, leaked. */
void as_consumer_free(struct as_consumer *c)
{
	int i;
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	if (!as_consumer_settled(c)) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	for (i = 0; i < c->nworkers; i++)
		pthread_join(c->workers[i], NULL);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	pthread_cond_destroy(&c->done_cv);
	free(c->workers);
	free(c->q);
	free(c);
}

/* ---- a late consumer ------------------------------------------------------------ */

/*
 * as_late_* is a consumer that uses the producer for as long as the spec
 * lets it, the way arrow-go's handler (v18.8.0) does: a worker thread calls
 * request(producer, 1) before it extracts each queued task, and goes on
 * doing so after the end of the stream and after the handler's release has
 * returned, adding a cancel there too. It also calls request and cancel
 * from on_next_task(NULL) (after the end) and from release. All of these
 * are legal while a task of the producer is not yet extracted (the
 * producer must stay valid, and after the end they must do nothing); it
 * makes no call after its last extract_data. With hold set, the worker
 * starts only once release has returned, so every one of its calls comes
 * after release. on_next_task requests one more task for each it queues,
 * so the producer never waits for the worker.
 */
struct as_late {
	struct ArrowAsyncDeviceStreamHandler h; /* handed to the producer */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ArrowAsyncProducer *prod; /* seen at on_schema; kept after release */
	struct ArrowAsyncTask *q;        /* ring buffer of tasks */
	size_t qcap, qhead, qlen;
	int64_t chunk;
	int hold, released, saw_end, worker_done, error_code;
	int64_t queued, checked, rows, after_release, problems;
	char problem[512];
	pthread_t worker;
};

/* as_lproblem records a breach; c->mu held. */
static void as_lproblem(struct as_late *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	as_record_problem(&c->problems, c->problem, sizeof c->problem, fmt, ap);
	va_end(ap);
}

static struct as_late *as_late_of(struct ArrowAsyncDeviceStreamHandler *h) { return h->private_data; }

static int as_late_on_schema(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowSchema *s)
{
	struct as_late *c = as_late_of(h);
	struct ArrowAsyncProducer *p = h->producer;
	char why[256];
	pthread_mutex_lock(&c->mu);
	if (as_check_schema(s, why, sizeof why) != 0)
		as_lproblem(c, "%s", why);
	if (p == NULL)
		as_lproblem(c, "handler->producer not populated before on_schema");
	c->prod = p;
	pthread_mutex_unlock(&c->mu);
	if (s != NULL && s->release != NULL)
		s->release(s);
	if (p == NULL)
		return EINVAL;
	p->request(p, c->chunk); /* allowed synchronously from on_schema */
	return 0;
}

static int as_late_on_next_task(struct ArrowAsyncDeviceStreamHandler *h, struct ArrowAsyncTask *task, const char *meta)
{
	struct as_late *c = as_late_of(h);
	struct ArrowAsyncProducer *p;
	struct ArrowAsyncTask *nq;
	size_t i;
	(void)meta;
	pthread_mutex_lock(&c->mu);
	p = c->prod;
	if (c->saw_end || c->released)
		as_lproblem(c, "on_next_task after the end or release");
	if (task == NULL) {
		c->saw_end = 1;
		pthread_mutex_unlock(&c->mu);
		/* After the end: both must do nothing (allowed from on_next_task). */
		p->request(p, 1);
		p->cancel(p);
		return 0;
	}
	if (c->qlen == c->qcap) {
		nq = xcalloc(c->qcap ? 2 * c->qcap : 16, sizeof *nq);
		for (i = 0; i < c->qlen; i++)
			nq[i] = c->q[(c->qhead + i) % c->qcap];
		free(c->q);
		c->q = nq;
		c->qhead = 0;
		c->qcap = c->qcap ? 2 * c->qcap : 16;
	}
	c->q[(c->qhead + c->qlen) % c->qcap] = *task; /* valid only during this call */
	c->qlen++;
	c->queued++;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	p->request(p, 1);
	return 0;
}

static void as_late_on_error(struct ArrowAsyncDeviceStreamHandler *h, int code, const char *msg, const char *meta)
{
	struct as_late *c = as_late_of(h);
	(void)meta;
	pthread_mutex_lock(&c->mu);
	as_lproblem(c, "on_error(%d, %s)", code, msg ? msg : "NULL");
	if (c->error_code == 0)
		c->error_code = code;
	pthread_mutex_unlock(&c->mu);
}

static void as_late_release(struct ArrowAsyncDeviceStreamHandler *h)
{
	struct as_late *c = as_late_of(h);
	struct ArrowAsyncProducer *p;
	pthread_mutex_lock(&c->mu);
	if (c->released)
		as_lproblem(c, "release called twice");
	p = c->prod;
	pthread_mutex_unlock(&c->mu);
	if (p != NULL) { /* the producer is valid until release returns */
		p->request(p, 1);
		p->cancel(p);
	}
	pthread_mutex_lock(&c->mu);
	c->released = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* The worker: request(1) before each extract_data (and cancel too after
 * release), to the last queued task, and nothing after it. */
static void *as_late_run(void *arg)
{
	struct as_late *c = arg;
	struct ArrowAsyncProducer *p;
	struct ArrowAsyncTask t;
	struct ArrowDeviceArray da;
	char why[256];
	int64_t b, len;
	int rc, after, bad;
	pthread_mutex_lock(&c->mu);
	while (c->hold && !c->released)
		pthread_cond_wait(&c->cv, &c->mu);
	for (;;) {
		while (c->qlen == 0 && !c->released)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->qlen == 0)
			break; /* released, and every task extracted */
		t = c->q[c->qhead];
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		b = c->checked;
		p = c->prod;
		after = c->released;
		if (after)
			c->after_release += 2;
		pthread_mutex_unlock(&c->mu);
		/* A task of p's is still held: p must be valid, and ignore these. */
		p->request(p, 1);
		if (after)
			p->cancel(p);
		memset(&da, 0, sizeof da);
		rc = t.extract_data(&t, &da);
		len = da.array.length;
		bad = rc == 0 ? as_check_batch(&da, b, why, sizeof why) : 0;
		if (rc == 0 && da.array.release != NULL)
			da.array.release(&da.array);
		pthread_mutex_lock(&c->mu);
		if (rc != 0)
			as_lproblem(c, "extract_data of batch %" PRId64 " returned %d", b, rc);
		else if (bad)
			as_lproblem(c, "%s", why);
		c->checked++;
		c->rows += len;
	}
	c->worker_done = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* as_late_new makes a late consumer that requests chunk tasks at on_schema;
 * hold: its worker starts once release has returned. */
struct as_late *as_late_new(intptr_t chunk, int hold)
{
	struct as_late *c;
	if (chunk < 1)
		return NULL;
	c = xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->chunk = chunk;
	c->hold = hold;
	c->h.on_schema = as_late_on_schema;
	c->h.on_next_task = as_late_on_next_task;
	c->h.on_error = as_late_on_error;
	c->h.release = as_late_release;
	c->h.private_data = c;
	if (pthread_create(&c->worker, NULL, as_late_run, c) != 0)
		abort();
	return c;
}

struct ArrowAsyncDeviceStreamHandler *as_late_handler(struct as_late *c) { return &c->h; }

/* as_late_wait waits up to timeout_ms for release and for the worker to
 * extract every task; 0, or ETIMEDOUT. */
static int as_late_worker_done(const void *c) { return ((const struct as_late *)c)->worker_done; }

int as_late_wait(struct as_late *c, intptr_t timeout_ms)
{
	return as_wait_until(&c->mu, &c->cv, as_late_worker_done, c, timeout_ms);
}

static int64_t as_late_get(struct as_late *c, const int64_t *field) { return as_locked_get(&c->mu, field); }

/* Tasks queued, batches extracted and checked, their rows, request and
 * cancel calls the worker made after release, and breaches seen. */
intptr_t as_late_queued(struct as_late *c) { return as_late_get(c, &c->queued); }
intptr_t as_late_batches(struct as_late *c) { return as_late_get(c, &c->checked); }
intptr_t as_late_rows(struct as_late *c) { return as_late_get(c, &c->rows); }
intptr_t as_late_after_release(struct as_late *c) { return as_late_get(c, &c->after_release); }
intptr_t as_late_problems(struct as_late *c) { return as_late_get(c, &c->problems); }
const char *as_late_problem(struct as_late *c) { return c->problem; }

int as_late_saw_end(struct as_late *c)
{
	int v;
	pthread_mutex_lock(&c->mu);
	v = c->saw_end;
	pthread_mutex_unlock(&c->mu);
	return v;
}

/* as_late_free joins the worker and frees c; one whose worker is not done
 * (the producer never released it) is left alone, leaked. */
void as_late_free(struct as_late *c)
{
	if (c == NULL || as_late_wait(c, 0) != 0)
		return;
	pthread_join(c->worker, NULL);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c->q);
	free(c);
}
