/*
 * adbc_double.c: a test double of an ADBC driver (ADBC 1.1.0, from adbc.h's
 * spec), for drivermgr's double_*_test.go. It does on demand what real
 * drivers do not: fail the k-th call of any function with a chosen status,
 * message, SQLSTATE, vendor code and 1.1 error details; behave as a driver
 * of ADBC 1.0.0 only; leave AdbcDriver.release NULL; hand out result
 * streams that lie; and count every object it makes and releases, so that
 * a test can tell that each was released exactly once.
 *
 * The toy database: a query "rows N [batch B]" yields one int64 column "v"
 * holding 0..N-1 in batches of B rows (4 by default); "wait" blocks until
 * the statement is cancelled (CANCELLED) or 10 s (double_set_wait) pass
 * (TIMEOUT); any other
 * query is a syntax error. ExecuteUpdate answers the rows bound, else N.
 * Bound parameters (Bind, BindStream) are moved in, read at execution (the
 * sum of an int64 first column is recorded) and released once, at the
 * next bind, when consumed, or with the statement. Partitions are "part:S:C"
 * (C rows from S). Options of every kind are stored and read back.
 *
 * Control functions (prefix double_) are for the tests; every entry point
 * takes one process-wide lock, so tests may call them from any thread.
 * Objects are never freed while a test may still name them: a released
 * database, connection, statement, stream or error is marked dead and
 * freed by double_reset, so that a call on it is caught (double_misuse)
 * rather than reading freed memory.
 */
/* adbc.h's ADBC_EXPORT empty: mingw-w64 warns of dllexport or dllimport on
 * its structs, and the functions exported here say so themselves (EXPORT). */
#define ADBC_EXPORT
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc.h"

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* ---- the functions the double counts (and can fail) --------------------- */

/* X(name, failable): every function of the driver's table, its entry point
 * and release, and the callbacks of the structs it hands out. */
#define FUNCS(X)                                                                   \
	X(DriverInit, 1) X(DriverRelease, 1) X(DatabaseNew, 1) X(DatabaseInit, 1)      \
	X(DatabaseSetOption, 1) X(DatabaseRelease, 1) X(ConnectionCommit, 1)           \
	X(ConnectionGetInfo, 1) X(ConnectionGetObjects, 1)                             \
	X(ConnectionGetTableSchema, 1) X(ConnectionGetTableTypes, 1)                   \
	X(ConnectionInit, 1) X(ConnectionNew, 1) X(ConnectionSetOption, 1)             \
	X(ConnectionReadPartition, 1) X(ConnectionRelease, 1)                          \
	X(ConnectionRollback, 1) X(StatementBind, 1) X(StatementBindStream, 1)         \
	X(StatementExecuteQuery, 1) X(StatementExecutePartitions, 1)                   \
	X(StatementGetParameterSchema, 1) X(StatementNew, 1) X(StatementPrepare, 1)    \
	X(StatementRelease, 1) X(StatementSetOption, 1) X(StatementSetSqlQuery, 1)     \
	X(StatementSetSubstraitPlan, 1) X(ErrorGetDetailCount, 0)                      \
	X(ErrorGetDetail, 0) X(ErrorFromArrayStream, 0) X(DatabaseGetOption, 1)        \
	X(DatabaseGetOptionBytes, 1) X(DatabaseGetOptionDouble, 1)                     \
	X(DatabaseGetOptionInt, 1) X(DatabaseSetOptionBytes, 1)                        \
	X(DatabaseSetOptionDouble, 1) X(DatabaseSetOptionInt, 1)                       \
	X(ConnectionCancel, 1) X(ConnectionGetOption, 1)                               \
	X(ConnectionGetOptionBytes, 1) X(ConnectionGetOptionDouble, 1)                 \
	X(ConnectionGetOptionInt, 1) X(ConnectionGetStatistics, 1)                     \
	X(ConnectionGetStatisticNames, 1) X(ConnectionSetOptionBytes, 1)               \
	X(ConnectionSetOptionDouble, 1) X(ConnectionSetOptionInt, 1)                   \
	X(StatementCancel, 1) X(StatementExecuteSchema, 1) X(StatementGetOption, 1)    \
	X(StatementGetOptionBytes, 1) X(StatementGetOptionDouble, 1)                   \
	X(StatementGetOptionInt, 1) X(StatementSetOptionBytes, 1)                      \
	X(StatementSetOptionDouble, 1) X(StatementSetOptionInt, 1) X(get_schema, 1)    \
	X(get_next, 1) X(get_last_error, 0) X(stream_release, 0) X(array_release, 0)   \
	X(schema_release, 0) X(error_release, 0) X(partitions_release, 0)

#define ENUM(name, f) F_##name,
enum { FUNCS(ENUM) NFUNCS };
#undef ENUM
#define NAME(name, f) #name,
static const char *const fn_names[NFUNCS] = {FUNCS(NAME)};
#undef NAME
#define FAILABLE(name, f) f,
static const int fn_failable[NFUNCS] = {FUNCS(FAILABLE)};
#undef FAILABLE

/* ---- global state, under mu ---------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cancel_cv = PTHREAD_COND_INITIALIZER;

#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

static int64_t calls[NFUNCS];

#define MAX_FAILS 8
#define MAX_DETAILS 4
struct detail {
	char *key;
	uint8_t *value;
	size_t len;
};
struct failure {
	int fn, status, fired;
	int64_t k; /* the call that fails: calls[fn] == k */
	int32_t vendor;
	char *msg;
	char sqlstate[5];
	int ndetails;
	struct detail details[MAX_DETAILS];
};
static struct failure fails[MAX_FAILS];
static int nfails, last_armed;
static int64_t fired;

/* Modes. */
static int mode_v100;        /* a 1.0.0-only driver */
static int wait_ms = 10000;  /* how long "wait" waits for a cancel */
static int mode_scribble;    /* with mode_v100: write the whole table anyway */
static int mode_null_release; /* AdbcDriver.release NULL */
static int mode_error_always; /* ErrorFromArrayStream: an error (status OK) for every live stream */
static int lie_kind, lie_at; /* how the next query results lie, and from which batch */

/* Live objects: made minus released. */
enum { L_DRIVERS, L_DATABASES, L_CONNECTIONS, L_STATEMENTS, L_STREAMS, L_ARRAYS,
       L_SCHEMAS, L_ERRORS, L_PARTITIONS, L_BOUND, NLIVE };
static const char *const live_names[NLIVE] = {"drivers", "databases", "connections",
	"statements", "streams", "arrays", "schemas", "errors", "partitions", "bound"};
static int64_t live[NLIVE];

/* Foreign structs (bound parameters) the double released. */
static int64_t foreign_arrays, foreign_schemas, foreign_streams;
static int64_t bound_rows, bound_sum, bound_batches;

static int64_t misuse;
static char misuse_msg[256];

static char entry_used[64];
static int version_used;
static struct AdbcDriver *the_driver; /* the table filled last */

static void note_misuse(const char *what)
{
	misuse++;
	snprintf(misuse_msg, sizeof misuse_msg, "%s", what);
}

/* ---- objects: never freed while a test may name them --------------------- */

#define MAGIC 0xadbcd0b1u
enum { K_DATABASE = 1, K_CONNECTION, K_STATEMENT, K_STREAM, K_ERROR, K_PARTITIONS };

struct obj {
	unsigned magic;
	int kind, alive;
	struct obj *next;
	void (*destroy)(struct obj *);
};
static struct obj *objects;

static void *obj_new(size_t size, int kind, void (*destroy)(struct obj *))
{
	struct obj *o = calloc(1, size);
	if (!o)
		abort();
	o->magic = MAGIC;
	o->kind = kind;
	o->alive = 1;
	o->destroy = destroy;
	o->next = objects;
	objects = o;
	return o;
}

/* find: p as a live object of kind, or NULL (noting a misuse: a call on a
 * released object, or on something that is not ours). */
static void *find(const void *p, int kind, const char *what)
{
	char buf[160];
	for (struct obj *o = objects; o; o = o->next) {
		if ((void *)o != p)
			continue;
		if (o->kind != kind) {
			snprintf(buf, sizeof buf, "%s: an object of another kind", what);
			note_misuse(buf);
			return NULL;
		}
		if (!o->alive) {
			snprintf(buf, sizeof buf, "%s: used after release", what);
			note_misuse(buf);
			return NULL;
		}
		return o;
	}
	snprintf(buf, sizeof buf, "%s: %s", what, p ? "not an object of the double" : "NULL private_data");
	note_misuse(buf);
	return NULL;
}

/* is_object: p is one of ours, dead or alive (no misuse noted). */
static struct obj *is_object(const void *p)
{
	for (struct obj *o = objects; o; o = o->next)
		if ((void *)o == p)
			return o;
	return NULL;
}

static void obj_kill(struct obj *o)
{
	if (o->destroy)
		o->destroy(o);
	o->alive = 0;
}

/* ---- errors -------------------------------------------------------------- */

/* An AdbcError's private_data in 1.1 mode: its details. */
struct err_details {
	struct obj h;
	int n;
	struct detail d[MAX_DETAILS];
};

static void details_destroy(struct obj *o)
{
	struct err_details *e = (struct err_details *)o;
	for (int i = 0; i < e->n; i++) {
		free(e->d[i].key);
		free(e->d[i].value);
	}
	e->n = 0;
}

static int stream_owns(const struct AdbcError *error);

static void error_release(struct AdbcError *error)
{
	LOCK();
	calls[F_error_release]++;
	if (!error || !error->message) {
		note_misuse("AdbcError.release: an error released already");
		UNLOCK();
		return;
	}
	if (stream_owns(error)) {
		/* adbc.h: the caller of ErrorFromArrayStream MUST NOT release it. */
		note_misuse("AdbcError.release: the error of a stream (ErrorFromArrayStream's)");
		UNLOCK();
		return;
	}
	free(error->message);
	error->message = NULL;
	if (error->vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && error->private_data) {
		struct err_details *d = find(error->private_data, K_ERROR, "AdbcError.release");
		if (d)
			obj_kill(&d->h);
		error->private_data = NULL;
	}
	error->release = NULL;
	live[L_ERRORS]--;
	UNLOCK();
}

/* set_error fills error (releasing what it held) with a message, SQLSTATE,
 * and either details (a 1.1 error that asks for them: vendor_code stays
 * ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA) or the vendor code. */
static void set_error(struct AdbcError *error, const char *msg, const char *sqlstate, int32_t vendor,
		      int ndetails, const struct detail *details)
{
	if (!error)
		return;
	if (error->release) {
		/* error_release takes the lock: do its work here. */
		free(error->message);
		error->message = NULL;
		if (error->vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && error->private_data) {
			struct err_details *d = find(error->private_data, K_ERROR, "set_error");
			if (d)
				obj_kill(&d->h);
			error->private_data = NULL;
		}
		error->release = NULL;
		live[L_ERRORS]--;
	}
	error->message = strdup(msg);
	if (sqlstate)
		memcpy(error->sqlstate, sqlstate, 5);
	else
		memset(error->sqlstate, 0, 5);
	if (!mode_v100 && error->vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && ndetails > 0) {
		struct err_details *d = obj_new(sizeof *d, K_ERROR, details_destroy);
		for (int i = 0; i < ndetails && i < MAX_DETAILS; i++) {
			d->d[i].key = strdup(details[i].key);
			d->d[i].len = details[i].len;
			d->d[i].value = malloc(details[i].len ? details[i].len : 1);
			if (details[i].len)
				memcpy(d->d[i].value, details[i].value, details[i].len);
			d->n++;
		}
		error->private_data = d;
		error->private_driver = the_driver;
	} else {
		error->vendor_code = vendor;
	}
	error->release = error_release;
	live[L_ERRORS]++;
}

static AdbcStatusCode fail_with(struct AdbcError *error, AdbcStatusCode st, const char *sqlstate, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* fail_with sets a plain error (no details, vendor code 0). */
static AdbcStatusCode fail_with(struct AdbcError *error, AdbcStatusCode st, const char *sqlstate, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	set_error(error, msg, sqlstate, 0, 0, NULL);
	return st;
}

/* enter counts a call of fn and answers the failure armed for it (its
 * status, with error set), or ADBC_STATUS_OK. */
static AdbcStatusCode enter(int fn, struct AdbcError *error)
{
	int64_t n = ++calls[fn];
	for (int i = 0; i < nfails; i++) {
		struct failure *f = &fails[i];
		if (f->fn != fn || f->k != n || f->fired)
			continue;
		f->fired++;
		fired++;
		/* An empty message: fail leaving the error as it was handed over
		 * (as PostgreSQL's driver does for what it does not implement). */
		if (f->msg[0] != '\0')
			set_error(error, f->msg, f->sqlstate, f->vendor, f->ndetails, f->details);
		return (AdbcStatusCode)f->status;
	}
	return ADBC_STATUS_OK;
}

#define ENTER(fn)                                                    \
	do {                                                         \
		AdbcStatusCode st_ = enter(F_##fn, error);           \
		if (st_ != ADBC_STATUS_OK) {                         \
			UNLOCK();                                    \
			return st_;                                  \
		}                                                    \
	} while (0)

/* ---- options ------------------------------------------------------------- */

enum { O_STRING, O_BYTES, O_INT, O_DOUBLE };
struct option {
	struct option *next;
	char *key;
	int kind;
	uint8_t *value; /* string (NUL-terminated) or bytes */
	size_t len;
	int64_t i;
	double d;
};

static void options_free(struct option **list)
{
	while (*list) {
		struct option *o = *list;
		*list = o->next;
		free(o->key);
		free(o->value);
		free(o);
	}
}

static struct option *option_find(struct option *list, const char *key)
{
	for (; list; list = list->next)
		if (strcmp(list->key, key) == 0)
			return list;
	return NULL;
}

/* option_put stores key (replacing a value of any kind). */
static struct option *option_put(struct option **list, const char *key, int kind)
{
	struct option *o = option_find(*list, key);
	if (!o) {
		o = calloc(1, sizeof *o);
		o->key = strdup(key);
		o->next = *list;
		*list = o;
	}
	free(o->value);
	o->value = NULL;
	o->len = 0;
	o->kind = kind;
	return o;
}

static AdbcStatusCode set_opt(struct option **list, int kind, const char *key, const void *v, size_t len,
			      int64_t i, double d, struct AdbcError *error)
{
	if (!key)
		return fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: option key is NULL");
	if (strcmp(key, "double.reject") == 0)
		return fail_with(error, ADBC_STATUS_NOT_IMPLEMENTED, NULL, "double: option %s not recognized", key);
	if ((kind == O_STRING && !v) || (kind == O_BYTES && !v && len > 0))
		return fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: option %s: NULL value", key);
	struct option *o = option_put(list, key, kind);
	switch (kind) {
	case O_STRING:
		o->len = strlen(v) + 1;
		o->value = (uint8_t *)strdup(v);
		break;
	case O_BYTES:
		o->len = len;
		o->value = malloc(len ? len : 1);
		if (len)
			memcpy(o->value, v, len);
		break;
	case O_INT:
		o->i = i;
		break;
	case O_DOUBLE:
		o->d = d;
		break;
	}
	return ADBC_STATUS_OK;
}

/* get_buf answers a string or bytes option as GetOption does: the length
 * it needs always, the value only where it fits. */
static AdbcStatusCode get_buf(struct option *list, int kind, const char *key, void *out, size_t *length,
			      struct AdbcError *error)
{
	if (!key || !length)
		return fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: NULL key or length");
	struct option *o = option_find(list, key);
	if (!o || o->kind != kind)
		return fail_with(error, ADBC_STATUS_NOT_FOUND, NULL, "double: option %s not found", key);
	if (*length >= o->len && o->len > 0) {
		if (!out)
			return fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: NULL value buffer");
		memcpy(out, o->value, o->len);
	}
	*length = o->len;
	return ADBC_STATUS_OK;
}

static AdbcStatusCode get_num(struct option *list, int kind, const char *key, void *out, struct AdbcError *error)
{
	if (!key || !out)
		return fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: NULL key or value");
	struct option *o = option_find(list, key);
	if (!o || o->kind != kind)
		return fail_with(error, ADBC_STATUS_NOT_FOUND, NULL, "double: option %s not found", key);
	if (kind == O_INT)
		*(int64_t *)out = o->i;
	else
		*(double *)out = o->d;
	return ADBC_STATUS_OK;
}

/* ---- database, connection, statement ------------------------------------- */

struct database {
	struct obj h;
	struct option *opts;
	int initialized;
};

struct connection {
	struct obj h;
	struct option *opts;
	int initialized;
};

struct statement {
	struct obj h;
	struct option *opts;
	char *query;
	int cancelled, running;
	/* bound parameters, moved in */
	int has_batch, has_stream;
	struct ArrowArray batch;
	struct ArrowSchema batch_schema;
	struct ArrowArrayStream stream;
};

static void database_destroy(struct obj *o)
{
	options_free(&((struct database *)o)->opts);
	live[L_DATABASES]--;
}

static void connection_destroy(struct obj *o)
{
	options_free(&((struct connection *)o)->opts);
	live[L_CONNECTIONS]--;
}

static void unbind(struct statement *s);

static void statement_destroy(struct obj *o)
{
	struct statement *s = (struct statement *)o;
	unbind(s);
	options_free(&s->opts);
	free(s->query);
	s->query = NULL;
	live[L_STATEMENTS]--;
}

/* ---- building arrays and schemas ----------------------------------------- */

struct snode {
	char *format, *name;
	int n;
	struct ArrowSchema *kids;
	struct ArrowSchema **kidptrs;
};

static void schema_release(struct ArrowSchema *s)
{
	LOCK();
	calls[F_schema_release]++;
	if (!s || !s->release) {
		note_misuse("ArrowSchema.release: a schema released already");
		UNLOCK();
		return;
	}
	struct snode *p = s->private_data;
	UNLOCK();
	for (int i = 0; i < p->n; i++)
		if (p->kids[i].release)
			p->kids[i].release(&p->kids[i]);
	LOCK();
	free(p->format);
	free(p->name);
	free(p->kids);
	free(p->kidptrs);
	free(p);
	s->release = NULL;
	s->private_data = NULL;
	live[L_SCHEMAS]--;
	UNLOCK();
}

/* S fills out as a schema node with n children to fill (K). */
static struct ArrowSchema *S(struct ArrowSchema *out, const char *format, const char *name, int nullable, int n)
{
	struct snode *p = calloc(1, sizeof *p);
	p->format = strdup(format);
	p->name = strdup(name);
	p->n = n;
	p->kids = calloc(n ? n : 1, sizeof *p->kids);
	p->kidptrs = calloc(n ? n : 1, sizeof *p->kidptrs);
	for (int i = 0; i < n; i++)
		p->kidptrs[i] = &p->kids[i];
	memset(out, 0, sizeof *out);
	out->format = p->format;
	out->name = p->name;
	out->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
	out->n_children = n;
	out->children = n ? p->kidptrs : NULL;
	out->release = schema_release;
	out->private_data = p;
	live[L_SCHEMAS]++;
	return out;
}

static struct ArrowSchema *K(struct ArrowSchema *s, int i)
{
	return &((struct snode *)s->private_data)->kids[i];
}

/* Release a schema this file made, from inside the lock. */
static void schema_drop(struct ArrowSchema *s)
{
	UNLOCK();
	s->release(s);
	LOCK();
}

struct anode {
	int nbuf;
	void *bufs[4];
	int n;                  /* real children */
	struct ArrowArray *kids; /* the real children */
	struct ArrowArray **kidptrs;
	unsigned orphans;        /* children whose release a lie set to NULL */
};

static void anode_free(struct ArrowArray *a);

static void array_release(struct ArrowArray *a)
{
	LOCK();
	calls[F_array_release]++;
	if (!a || !a->release) {
		note_misuse("ArrowArray.release: an array released already");
		UNLOCK();
		return;
	}
	UNLOCK();
	anode_free(a);
}

/* anode_free frees a's tree (lock not held: children's release callbacks
 * are called through their struct, as a consumer would). */
static void anode_free(struct ArrowArray *a)
{
	struct anode *p = a->private_data;
	for (int i = 0; i < p->n; i++) {
		if (p->kids[i].release)
			p->kids[i].release(&p->kids[i]);
		else if (p->orphans & (1u << i))
			anode_free(&p->kids[i]);
	}
	LOCK();
	for (int i = 0; i < 4; i++)
		free(p->bufs[i]);
	free(p->kids);
	free(p->kidptrs);
	free(p);
	a->release = NULL;
	a->private_data = NULL;
	live[L_ARRAYS]--;
	UNLOCK();
}

/* A fills out as an array node of length len with nbuf buffers (set with
 * B) and n children (filled through AK). */
static struct ArrowArray *A(struct ArrowArray *out, int64_t len, int64_t nulls, int nbuf, int n)
{
	struct anode *p = calloc(1, sizeof *p);
	p->nbuf = nbuf;
	p->n = n;
	p->kids = calloc(n ? n : 1, sizeof *p->kids);
	p->kidptrs = calloc(n + 1, sizeof *p->kidptrs);
	for (int i = 0; i < n; i++)
		p->kidptrs[i] = &p->kids[i];
	memset(out, 0, sizeof *out);
	out->length = len;
	out->null_count = nulls;
	out->n_buffers = nbuf;
	out->buffers = (const void **)p->bufs;
	out->n_children = n;
	out->children = n ? p->kidptrs : NULL;
	out->release = array_release;
	out->private_data = p;
	live[L_ARRAYS]++;
	return out;
}

static struct ArrowArray *AK(struct ArrowArray *a, int i)
{
	return &((struct anode *)a->private_data)->kids[i];
}

/* B gives buffer i of a size bytes (zeroed) and returns it. */
static void *B(struct ArrowArray *a, int i, size_t size)
{
	struct anode *p = a->private_data;
	p->bufs[i] = calloc(1, size ? size : 1);
	return p->bufs[i];
}

/* empty_like fills out with an empty array of the type s describes. */
static void empty_like(struct ArrowArray *out, const struct ArrowSchema *s)
{
	const char *f = s->format;
	if (strcmp(f, "+s") == 0) {
		A(out, 0, 0, 1, (int)s->n_children);
	} else if (strcmp(f, "+l") == 0 || strcmp(f, "+m") == 0) {
		A(out, 0, 0, 2, 1);
		B(out, 1, 4);
	} else if (strncmp(f, "+ud:", 4) == 0) {
		A(out, 0, 0, 2, (int)s->n_children);
		B(out, 0, 1);
		B(out, 1, 4);
	} else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
		A(out, 0, 0, 3, 0);
		B(out, 1, 4);
		B(out, 2, 1);
	} else {
		A(out, 0, 0, 2, 0);
		B(out, 1, 8);
	}
	for (int i = 0; i < s->n_children; i++)
		empty_like(AK(out, i), s->children[i]);
}

/* utf8 fills out with n strings (NULL: a null). */
static void utf8(struct ArrowArray *out, int n, const char *const *v)
{
	int nulls = 0;
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		if (v[i])
			total += strlen(v[i]);
		else
			nulls++;
	}
	A(out, n, nulls, 3, 0);
	uint8_t *valid = nulls ? B(out, 0, (n + 7) / 8) : NULL;
	int32_t *off = B(out, 1, 4 * (n + 1));
	char *data = B(out, 2, total);
	for (int i = 0; i < n; i++) {
		size_t l = v[i] ? strlen(v[i]) : 0;
		if (v[i]) {
			memcpy(data + off[i], v[i], l);
			if (valid)
				valid[i / 8] |= 1 << (i % 8);
		}
		off[i + 1] = off[i] + (int32_t)l;
	}
}

static void int64s(struct ArrowArray *out, int n, const int64_t *v)
{
	A(out, n, 0, 2, 0);
	memcpy(B(out, 1, 8 * n), v, 8 * n);
}

/* ---- the standard schemas ------------------------------------------------ */

/* The query results: struct<v: int64>. */
static void result_schema(struct ArrowSchema *out)
{
	S(out, "+s", "", 0, 1);
	S(K(out, 0), "l", "v", 1, 0);
}

static void info_schema(struct ArrowSchema *out)
{
	S(out, "+s", "", 0, 2);
	S(K(out, 0), "I", "info_name", 0, 0);
	struct ArrowSchema *u = S(K(out, 1), "+ud:0,1,2,3,4,5", "info_value", 1, 6);
	S(K(u, 0), "u", "string_value", 1, 0);
	S(K(u, 1), "b", "bool_value", 1, 0);
	S(K(u, 2), "l", "int64_value", 1, 0);
	S(K(u, 3), "i", "int32_bitmask", 1, 0);
	S(K(S(K(u, 4), "+l", "string_list", 1, 1), 0), "u", "item", 1, 0);
	struct ArrowSchema *e = S(K(S(K(u, 5), "+m", "int32_to_int32_list_map", 1, 1), 0), "+s", "entries", 0, 2);
	S(K(e, 0), "i", "key", 0, 0);
	S(K(S(K(e, 1), "+l", "value", 1, 1), 0), "i", "item", 1, 0);
}

static void table_types_schema(struct ArrowSchema *out)
{
	S(out, "+s", "", 0, 1);
	S(K(out, 0), "u", "table_type", 0, 0);
}

static void usage_schema(struct ArrowSchema *out, const char *name)
{
	S(out, "+s", name, 1, 4);
	S(K(out, 0), "u", "fk_catalog", 1, 0);
	S(K(out, 1), "u", "fk_db_schema", 1, 0);
	S(K(out, 2), "u", "fk_table", 0, 0);
	S(K(out, 3), "u", "fk_column_name", 0, 0);
}

static void objects_schema(struct ArrowSchema *out)
{
	static const struct {
		const char *name, *format;
	} cols[] = {{"column_name", "u"}, {"ordinal_position", "i"}, {"remarks", "u"},
		    {"xdbc_data_type", "s"}, {"xdbc_type_name", "u"}, {"xdbc_column_size", "i"},
		    {"xdbc_decimal_digits", "s"}, {"xdbc_num_prec_radix", "s"}, {"xdbc_nullable", "s"},
		    {"xdbc_column_def", "u"}, {"xdbc_sql_data_type", "s"}, {"xdbc_datetime_sub", "s"},
		    {"xdbc_char_octet_length", "i"}, {"xdbc_is_nullable", "u"}, {"xdbc_scope_catalog", "u"},
		    {"xdbc_scope_schema", "u"}, {"xdbc_scope_table", "u"}, {"xdbc_is_autoincrement", "b"},
		    {"xdbc_is_generatedcolumn", "b"}};
	S(out, "+s", "", 0, 2);
	S(K(out, 0), "u", "catalog_name", 1, 0);
	struct ArrowSchema *db = S(K(S(K(out, 1), "+l", "catalog_db_schemas", 1, 1), 0), "+s", "item", 1, 2);
	S(K(db, 0), "u", "db_schema_name", 1, 0);
	struct ArrowSchema *t = S(K(S(K(db, 1), "+l", "db_schema_tables", 1, 1), 0), "+s", "item", 1, 4);
	S(K(t, 0), "u", "table_name", 0, 0);
	S(K(t, 1), "u", "table_type", 0, 0);
	struct ArrowSchema *c = S(K(S(K(t, 2), "+l", "table_columns", 1, 1), 0), "+s", "item", 1, 19);
	for (int i = 0; i < 19; i++)
		S(K(c, i), cols[i].format, cols[i].name, i != 0, 0);
	struct ArrowSchema *k = S(K(S(K(t, 3), "+l", "table_constraints", 1, 1), 0), "+s", "item", 1, 4);
	S(K(k, 0), "u", "constraint_name", 1, 0);
	S(K(k, 1), "u", "constraint_type", 0, 0);
	S(K(S(K(k, 2), "+l", "constraint_column_names", 0, 1), 0), "u", "item", 1, 0);
	usage_schema(K(S(K(k, 3), "+l", "constraint_column_usage", 1, 1), 0), "item");
}

static void statistics_schema(struct ArrowSchema *out)
{
	S(out, "+s", "", 0, 2);
	S(K(out, 0), "u", "catalog_name", 1, 0);
	struct ArrowSchema *db = S(K(S(K(out, 1), "+l", "catalog_db_schemas", 0, 1), 0), "+s", "item", 1, 2);
	S(K(db, 0), "u", "db_schema_name", 1, 0);
	struct ArrowSchema *st = S(K(S(K(db, 1), "+l", "db_schema_statistics", 0, 1), 0), "+s", "item", 1, 5);
	S(K(st, 0), "u", "table_name", 0, 0);
	S(K(st, 1), "u", "column_name", 1, 0);
	S(K(st, 2), "s", "statistic_key", 0, 0);
	struct ArrowSchema *u = S(K(st, 3), "+ud:0,1,2,3", "statistic_value", 0, 4);
	S(K(u, 0), "l", "int64", 1, 0);
	S(K(u, 1), "L", "uint64", 1, 0);
	S(K(u, 2), "g", "float64", 1, 0);
	S(K(u, 3), "z", "binary", 1, 0);
	S(K(st, 4), "b", "statistic_is_approximate", 0, 0);
}

static void statistic_names_schema(struct ArrowSchema *out)
{
	S(out, "+s", "", 0, 2);
	S(K(out, 0), "u", "statistic_name", 0, 0);
	S(K(out, 1), "s", "statistic_key", 0, 0);
}

/* ---- result streams ------------------------------------------------------ */

/* Lies, for double_lie. */
enum {
	LIE_NONE,
	LIE_ROOT_LONGER,     /* the batch's length exceeds its column's */
	LIE_CHILD_HUGE,      /* a column's length exceeds any buffer (past the bound) */
	LIE_N_BUFFERS,       /* an int64 column with 1 buffer */
	LIE_NULL_BUFFER,     /* a NULL data buffer under a non-zero length */
	LIE_N_CHILDREN,      /* the batch has 2 columns, the schema 1 */
	LIE_NULL_COUNT,      /* null_count > length */
	LIE_NULLS_NO_BITMAP, /* nulls without a validity bitmap */
	LIE_NEGATIVE_LENGTH, /* length -1 */
	LIE_CHILD_NULL,      /* children[0] is NULL */
	LIE_CHILD_RELEASED,  /* children[0] has release NULL */
	LIE_GET_NEXT_FAIL,   /* get_next fails (EIO), with an AdbcError for ErrorFromArrayStream */
	LIE_BAD_SCHEMA,      /* get_schema gives an invalid format */
	LIE_SCHEMA_CHILDREN, /* get_schema: n_children 1, children NULL */
	LIE_NEGATIVE_OFFSET, /* offset -1 */
	LIE_ROOT_NULLS,      /* the batch's struct array claims a null */
	NLIES
};

enum { ST_RANGE, ST_INFO, ST_TABLE_TYPES, ST_OBJECTS, ST_STATS, ST_STAT_NAMES };

struct stream {
	struct obj h;
	int kind;
	int64_t start, n, batch, pos;
	int nbatches, done;
	int lie, lie_at;
	uint32_t codes[16];
	int ncodes, all_codes, depth, catalog_match;
	char last_error[256];
	int failed;
	AdbcStatusCode status;
	struct AdbcError error;
};

/* stream_owns: error is the AdbcError of one of the double's streams. */
static int stream_owns(const struct AdbcError *error)
{
	for (struct obj *o = objects; o; o = o->next)
		if (o->kind == K_STREAM && &((struct stream *)o)->error == error)
			return 1;
	return 0;
}

static void stream_destroy(struct obj *o)
{
	struct stream *s = (struct stream *)o;
	if (s->error.release) {
		/* as error_release, inside the lock */
		free(s->error.message);
		s->error.message = NULL;
		if (s->error.vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && s->error.private_data) {
			struct err_details *d = find(s->error.private_data, K_ERROR, "stream release");
			if (d)
				obj_kill(&d->h);
			s->error.private_data = NULL;
		}
		s->error.release = NULL;
		live[L_ERRORS]--;
	}
	live[L_STREAMS]--;
}

/* stream_fail records a get_next/get_schema failure: its message for
 * get_last_error and its AdbcError for ErrorFromArrayStream. */
static int stream_fail(struct stream *s, AdbcStatusCode st, const char *msg, const char *sqlstate,
		       int32_t vendor, int ndetails, const struct detail *d)
{
	s->failed = 1;
	s->status = st;
	snprintf(s->last_error, sizeof s->last_error, "%s", msg);
	set_error(&s->error, msg, sqlstate, vendor, ndetails, d);
	return EIO;
}

/* stream_enter is enter for a stream's callback: an armed failure becomes
 * the stream's error. */
static int stream_enter(struct stream *s, int fn)
{
	struct AdbcError e = {0};
	e.vendor_code = mode_v100 ? 0 : ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA;
	AdbcStatusCode st = enter(fn, &e);
	if (st == ADBC_STATUS_OK)
		return 0;
	/* Move e into the stream. */
	if (s->error.release) {
		free(s->error.message);
		if (s->error.vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && s->error.private_data) {
			struct err_details *d = find(s->error.private_data, K_ERROR, "stream error");
			if (d)
				obj_kill(&d->h);
		}
		live[L_ERRORS]--;
	}
	s->error = e;
	s->failed = 1;
	s->status = st;
	snprintf(s->last_error, sizeof s->last_error, "%s", e.message ? e.message : "");
	return EIO;
}

static int stream_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	LOCK();
	struct stream *s = st && st->release ? find(st->private_data, K_STREAM, "get_schema") : NULL;
	if (!s) {
		if (st && !st->release)
			note_misuse("get_schema: a stream released already");
		calls[F_get_schema]++;
		UNLOCK();
		return EINVAL;
	}
	int rc = stream_enter(s, F_get_schema);
	if (rc) {
		UNLOCK();
		return rc;
	}
	switch (s->kind) {
	case ST_RANGE:
		result_schema(out);
		if (s->lie == LIE_BAD_SCHEMA) {
			struct snode *p = K(out, 0)->private_data;
			free(p->format);
			p->format = strdup("zz");
			K(out, 0)->format = p->format;
		} else if (s->lie == LIE_SCHEMA_CHILDREN) {
			out->children = NULL;
		}
		break;
	case ST_INFO:
		info_schema(out);
		break;
	case ST_TABLE_TYPES:
		table_types_schema(out);
		break;
	case ST_OBJECTS:
		objects_schema(out);
		break;
	case ST_STATS:
		statistics_schema(out);
		break;
	case ST_STAT_NAMES:
		statistic_names_schema(out);
		break;
	}
	UNLOCK();
	return 0;
}

/* range_batch fills out with the next batch of a query's result, lying as
 * the stream was told to from batch lie_at on. */
static void range_batch(struct stream *s, struct ArrowArray *out)
{
	int64_t len = s->n - s->pos < s->batch ? s->n - s->pos : s->batch;
	int lie = s->nbatches >= s->lie_at ? s->lie : LIE_NONE;
	A(out, len, 0, 1, lie == LIE_N_CHILDREN ? 2 : 1);
	for (int c = 0; c < out->n_children; c++) {
		struct ArrowArray *v = A(AK(out, c), len, 0, 2, 0);
		int64_t *d = B(v, 1, 8 * len);
		for (int64_t i = 0; i < len; i++)
			d[i] = s->start + s->pos + i;
	}
	struct ArrowArray *v = AK(out, 0);
	struct anode *p = out->private_data;
	switch (lie) {
	case LIE_ROOT_LONGER:
		out->length = len + 5;
		break;
	case LIE_CHILD_HUGE:
		v->length = INT64_MAX / 32;
		break;
	case LIE_N_BUFFERS:
		v->n_buffers = 1;
		break;
	case LIE_NULL_BUFFER: {
		struct anode *vp = v->private_data;
		vp->bufs[3] = vp->bufs[1]; /* still freed with the node */
		vp->bufs[1] = NULL;
		break;
	}
	case LIE_NULL_COUNT:
		v->null_count = len + 1;
		break;
	case LIE_NULLS_NO_BITMAP:
		v->null_count = 1;
		break;
	case LIE_NEGATIVE_LENGTH:
		v->length = -1;
		break;
	case LIE_CHILD_NULL:
		p->kidptrs[0] = NULL;
		break;
	case LIE_CHILD_RELEASED:
		v->release = NULL;
		p->orphans |= 1;
		break;
	case LIE_NEGATIVE_OFFSET:
		v->offset = -1;
		break;
	case LIE_ROOT_NULLS:
		out->null_count = 1;
		break;
	}
	s->pos += len;
}

static void info_batch(struct stream *s, struct ArrowArray *out)
{
	static const uint32_t known[] = {ADBC_INFO_VENDOR_NAME, ADBC_INFO_VENDOR_VERSION, ADBC_INFO_DRIVER_NAME,
					 ADBC_INFO_DRIVER_VERSION, ADBC_INFO_DRIVER_ADBC_VERSION};
	uint32_t codes[16];
	int n = 0;
	for (int i = 0; i < 5; i++) {
		int want = s->all_codes;
		for (int j = 0; j < s->ncodes; j++)
			want |= s->codes[j] == known[i];
		if (want)
			codes[n++] = known[i];
	}
	struct ArrowSchema sc;
	info_schema(&sc);
	A(out, n, 0, 1, 2);
	struct ArrowArray *name = A(AK(out, 0), n, 0, 2, 0);
	memcpy(B(name, 1, 4 * n), codes, 4 * n);
	struct ArrowArray *u = A(AK(out, 1), n, 0, 2, 6);
	int8_t *ids = B(u, 0, n);
	int32_t *off = B(u, 1, 4 * n);
	const char *strs[16];
	int64_t ints[16];
	int ns = 0, ni = 0;
	for (int i = 0; i < n; i++) {
		const char *v = NULL;
		switch (codes[i]) {
		case ADBC_INFO_VENDOR_NAME:
			v = "Double";
			break;
		case ADBC_INFO_VENDOR_VERSION:
			v = "1.0-double";
			break;
		case ADBC_INFO_DRIVER_NAME:
			v = "ADBC Double Driver";
			break;
		case ADBC_INFO_DRIVER_VERSION:
			v = "0.1.0";
			break;
		}
		if (v) {
			ids[i] = 0;
			off[i] = ns;
			strs[ns++] = v;
		} else {
			ids[i] = 2;
			off[i] = ni;
			ints[ni++] = mode_v100 ? ADBC_VERSION_1_0_0 : ADBC_VERSION_1_1_0;
		}
	}
	struct ArrowSchema *us = K(&sc, 1);
	for (int c = 0; c < 6; c++) {
		if (c == 0)
			utf8(AK(u, 0), ns, strs);
		else if (c == 2)
			int64s(AK(u, 2), ni, ints);
		else
			empty_like(AK(u, c), K(us, c));
	}
	schema_drop(&sc);
}

static void table_types_batch(struct ArrowArray *out)
{
	static const char *const types[] = {"TABLE", "VIEW"};
	A(out, 2, 0, 1, 1);
	utf8(AK(out, 0), 2, types);
}

/* One catalog, "double", with no schemas (null at depth catalogs). */
static void objects_batch(struct stream *s, struct ArrowArray *out)
{
	struct ArrowSchema sc;
	objects_schema(&sc);
	int n = s->catalog_match ? 1 : 0;
	static const char *const names[] = {"double"};
	A(out, n, 0, 1, 2);
	utf8(AK(out, 0), n, names);
	int nulls = n && s->depth == ADBC_OBJECT_DEPTH_CATALOGS;
	struct ArrowArray *l = A(AK(out, 1), n, nulls, 2, 1);
	if (nulls)
		B(l, 0, 1); /* all bits 0: null */
	B(l, 1, 4 * (n + 1));
	empty_like(AK(l, 0), K(K(&sc, 1), 0));
	schema_drop(&sc);
}

static void stats_batch(struct ArrowArray *out)
{
	struct ArrowSchema sc;
	statistics_schema(&sc);
	static const char *const names[] = {"double"};
	A(out, 1, 0, 1, 2);
	utf8(AK(out, 0), 1, names);
	struct ArrowArray *l = A(AK(out, 1), 1, 0, 2, 1);
	B(l, 1, 8);
	empty_like(AK(l, 0), K(K(&sc, 1), 0));
	schema_drop(&sc);
}

static void stat_names_batch(struct ArrowArray *out)
{
	static const char *const names[] = {"double.rows"};
	A(out, 1, 0, 1, 2);
	utf8(AK(out, 0), 1, names);
	struct ArrowArray *k = A(AK(out, 1), 1, 0, 2, 0);
	*(int16_t *)B(k, 1, 2) = 1024;
}

static int stream_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	LOCK();
	struct stream *s = st && st->release ? find(st->private_data, K_STREAM, "get_next") : NULL;
	if (!s) {
		if (st && !st->release)
			note_misuse("get_next: a stream released already");
		calls[F_get_next]++;
		UNLOCK();
		return EINVAL;
	}
	int rc = stream_enter(s, F_get_next);
	if (rc) {
		UNLOCK();
		return rc;
	}
	if (s->failed) {
		UNLOCK();
		return EIO;
	}
	if (s->kind == ST_RANGE && s->lie == LIE_GET_NEXT_FAIL && s->nbatches >= s->lie_at) {
		static const struct detail d[] = {{"double.lie", (uint8_t *)"get_next", 8},
						  {"double.binary", (uint8_t *)"\x00\x01\x02", 3}};
		rc = stream_fail(s, ADBC_STATUS_IO, "double: the stream broke", "08006", 77, 2, d);
		UNLOCK();
		return rc;
	}
	if (s->done || (s->kind == ST_RANGE && s->pos >= s->n)) {
		memset(out, 0, sizeof *out); /* release NULL: the end */
		s->done = 1;
		UNLOCK();
		return 0;
	}
	switch (s->kind) {
	case ST_RANGE:
		range_batch(s, out);
		break;
	case ST_INFO:
		info_batch(s, out);
		s->done = 1;
		break;
	case ST_TABLE_TYPES:
		table_types_batch(out);
		s->done = 1;
		break;
	case ST_OBJECTS:
		objects_batch(s, out);
		s->done = 1;
		break;
	case ST_STATS:
		stats_batch(out);
		s->done = 1;
		break;
	case ST_STAT_NAMES:
		stat_names_batch(out);
		s->done = 1;
		break;
	}
	s->nbatches++;
	UNLOCK();
	return 0;
}

static const char *stream_get_last_error(struct ArrowArrayStream *st)
{
	LOCK();
	calls[F_get_last_error]++;
	struct stream *s = st && st->release ? find(st->private_data, K_STREAM, "get_last_error") : NULL;
	const char *msg = s && s->failed ? s->last_error : NULL;
	UNLOCK();
	return msg;
}

static void stream_release(struct ArrowArrayStream *st)
{
	LOCK();
	calls[F_stream_release]++;
	if (!st || !st->release) {
		note_misuse("ArrowArrayStream.release: a stream released already");
		UNLOCK();
		return;
	}
	struct stream *s = find(st->private_data, K_STREAM, "ArrowArrayStream.release");
	if (s)
		obj_kill(&s->h);
	st->release = NULL;
	st->private_data = NULL;
	UNLOCK();
}

static struct stream *stream_new(struct ArrowArrayStream *out, int kind)
{
	struct stream *s = obj_new(sizeof *s, K_STREAM, stream_destroy);
	s->kind = kind;
	s->batch = 4;
	s->error.vendor_code = mode_v100 ? 0 : ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA;
	memset(out, 0, sizeof *out);
	out->get_schema = stream_get_schema;
	out->get_next = stream_get_next;
	out->get_last_error = stream_get_last_error;
	out->release = stream_release;
	out->private_data = s;
	live[L_STREAMS]++;
	return s;
}

/* ---- the driver's functions ---------------------------------------------- */

#define HANDLE(T, var, h, kind, fn)                                                  \
	struct T *var = (h) ? find((h)->private_data, kind, #fn) : NULL;             \
	if (!var) {                                                                  \
		AdbcStatusCode st_ = fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, \
					       "double: " #fn ": not a live " #T);    \
		UNLOCK();                                                            \
		return st_;                                                          \
	}

#define RETURN(x)                          \
	do {                               \
		AdbcStatusCode r_ = (x);   \
		UNLOCK();                  \
		return r_;                 \
	} while (0)

static AdbcStatusCode DatabaseNew(struct AdbcDatabase *database, struct AdbcError *error)
{
	LOCK();
	ENTER(DatabaseNew);
	if (!database)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: DatabaseNew: NULL"));
	if (database->private_data) {
		note_misuse("DatabaseNew: private_data not NULL");
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: DatabaseNew: not zeroed"));
	}
	database->private_data = obj_new(sizeof(struct database), K_DATABASE, database_destroy);
	live[L_DATABASES]++;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode DatabaseInit(struct AdbcDatabase *database, struct AdbcError *error)
{
	LOCK();
	ENTER(DatabaseInit);
	HANDLE(database, db, database, K_DATABASE, DatabaseInit);
	if (db->initialized)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: DatabaseInit: initialized already"));
	db->initialized = 1;
	RETURN(ADBC_STATUS_OK);
}

/* Release functions free their object even when told to fail: a release
 * that fails cannot be retried (the caller's struct is gone). */
static AdbcStatusCode DatabaseRelease(struct AdbcDatabase *database, struct AdbcError *error)
{
	LOCK();
	AdbcStatusCode st = enter(F_DatabaseRelease, error);
	HANDLE(database, db, database, K_DATABASE, DatabaseRelease);
	obj_kill(&db->h);
	database->private_data = NULL;
	RETURN(st);
}

static AdbcStatusCode ConnectionNew(struct AdbcConnection *connection, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionNew);
	if (!connection)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: ConnectionNew: NULL"));
	if (connection->private_data) {
		note_misuse("ConnectionNew: private_data not NULL");
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: ConnectionNew: not zeroed"));
	}
	connection->private_data = obj_new(sizeof(struct connection), K_CONNECTION, connection_destroy);
	live[L_CONNECTIONS]++;
	RETURN(ADBC_STATUS_OK);
}

/* deadline_in is the CLOCK_REALTIME time ms from now, for
 * pthread_cond_timedwait. */
static struct timespec deadline_in(int ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return until;
}

/* init_gather: ConnectionInit waits (up to 5 s) until that many are in
 * progress at once, as a server's connect would overlap: a manager that
 * serializes them fails with TIMEOUT (double_set_init_gather). */
static int init_gather, initing;
static pthread_cond_t gather_cv = PTHREAD_COND_INITIALIZER;

static AdbcStatusCode ConnectionInit(struct AdbcConnection *connection, struct AdbcDatabase *database,
				     struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionInit);
	HANDLE(connection, c, connection, K_CONNECTION, ConnectionInit);
	HANDLE(database, db, database, K_DATABASE, ConnectionInit);
	if (!db->initialized)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: ConnectionInit: database not initialized"));
	if (c->initialized)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: ConnectionInit: initialized already"));
	if (init_gather > 0) {
		int gathered = ++initing >= init_gather;
		pthread_cond_broadcast(&gather_cv);
		struct timespec until = deadline_in(5000);
		int rc = 0;
		while (!gathered && initing < init_gather && rc == 0)
			rc = pthread_cond_timedwait(&gather_cv, &mu, &until);
		gathered = gathered || initing >= init_gather;
		if (!gathered) {
			initing--;
			RETURN(fail_with(error, ADBC_STATUS_TIMEOUT, NULL,
					 "double: ConnectionInit: %d of %d inits at once after 5 s (serialized?)", initing + 1, init_gather));
		}
	}
	c->initialized = 1;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionRelease(struct AdbcConnection *connection, struct AdbcError *error)
{
	LOCK();
	AdbcStatusCode st = enter(F_ConnectionRelease, error);
	HANDLE(connection, c, connection, K_CONNECTION, ConnectionRelease);
	obj_kill(&c->h);
	connection->private_data = NULL;
	RETURN(st);
}

#define CONN(fn) HANDLE(connection, c, connection, K_CONNECTION, fn)                     \
	if (!c->initialized)                                                             \
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: " #fn ": connection not initialized"));

static AdbcStatusCode ConnectionCommit(struct AdbcConnection *connection, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionCommit);
	CONN(ConnectionCommit);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionRollback(struct AdbcConnection *connection, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionRollback);
	CONN(ConnectionRollback);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionCancel(struct AdbcConnection *connection, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionCancel);
	HANDLE(connection, c, connection, K_CONNECTION, ConnectionCancel);
	(void)c;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetInfo(struct AdbcConnection *connection, const uint32_t *codes, size_t n,
					struct ArrowArrayStream *out, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetInfo);
	CONN(ConnectionGetInfo);
	if (!out || (n > 0 && !codes))
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetInfo: NULL argument"));
	struct stream *s = stream_new(out, ST_INFO);
	s->all_codes = codes == NULL;
	for (size_t i = 0; i < n && i < 16; i++)
		s->codes[s->ncodes++] = codes[i];
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetObjects(struct AdbcConnection *connection, int depth, const char *catalog,
					   const char *db_schema, const char *table_name, const char **table_type,
					   const char *column_name, struct ArrowArrayStream *out,
					   struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetObjects);
	CONN(ConnectionGetObjects);
	if (!out)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetObjects: NULL stream"));
	if (depth < ADBC_OBJECT_DEPTH_ALL || depth > ADBC_OBJECT_DEPTH_TABLES)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetObjects: depth %d", depth));
	for (const char **t = table_type; t && *t; t++)
		; /* read them all, as a driver would */
	struct stream *s = stream_new(out, ST_OBJECTS);
	s->depth = depth;
	s->catalog_match = !catalog || strcmp(catalog, "double") == 0 || strcmp(catalog, "%") == 0;
	(void)db_schema, (void)table_name, (void)column_name;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetTableSchema(struct AdbcConnection *connection, const char *catalog,
					       const char *db_schema, const char *table_name,
					       struct ArrowSchema *schema, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetTableSchema);
	CONN(ConnectionGetTableSchema);
	if (!table_name || !schema)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetTableSchema: NULL argument"));
	if (strcmp(table_name, "t") != 0)
		RETURN(fail_with(error, ADBC_STATUS_NOT_FOUND, "42P01", "double: no table %s", table_name));
	(void)catalog, (void)db_schema;
	result_schema(schema);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetTableTypes(struct AdbcConnection *connection, struct ArrowArrayStream *out,
					      struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetTableTypes);
	CONN(ConnectionGetTableTypes);
	if (!out)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetTableTypes: NULL stream"));
	stream_new(out, ST_TABLE_TYPES);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetStatistics(struct AdbcConnection *connection, const char *catalog,
					      const char *db_schema, const char *table_name, char approximate,
					      struct ArrowArrayStream *out, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetStatistics);
	CONN(ConnectionGetStatistics);
	if (!out)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetStatistics: NULL stream"));
	(void)catalog, (void)db_schema, (void)table_name, (void)approximate;
	stream_new(out, ST_STATS);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode ConnectionGetStatisticNames(struct AdbcConnection *connection, struct ArrowArrayStream *out,
						  struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionGetStatisticNames);
	CONN(ConnectionGetStatisticNames);
	if (!out)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetStatisticNames: NULL stream"));
	stream_new(out, ST_STAT_NAMES);
	RETURN(ADBC_STATUS_OK);
}

/* parse_partition reads "part:S:C". */
static int parse_partition(const uint8_t *p, size_t len, int64_t *start, int64_t *count)
{
	char buf[64];
	if (!p || len == 0 || len >= sizeof buf)
		return 0;
	memcpy(buf, p, len);
	buf[len] = 0;
	char end;
	return sscanf(buf, "part:%" SCNd64 ":%" SCNd64 "%c", start, count, &end) == 2 && *start >= 0 && *count >= 0;
}

static AdbcStatusCode ConnectionReadPartition(struct AdbcConnection *connection, const uint8_t *serialized,
					      size_t len, struct ArrowArrayStream *out, struct AdbcError *error)
{
	LOCK();
	ENTER(ConnectionReadPartition);
	CONN(ConnectionReadPartition);
	int64_t start, count;
	if (!out)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: ReadPartition: NULL stream"));
	if (!parse_partition(serialized, len, &start, &count))
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: ReadPartition: not a partition of the double"));
	struct stream *s = stream_new(out, ST_RANGE);
	s->start = start;
	s->n = count;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementNew(struct AdbcConnection *connection, struct AdbcStatement *statement,
				   struct AdbcError *error)
{
	LOCK();
	ENTER(StatementNew);
	CONN(StatementNew);
	if (!statement)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: StatementNew: NULL"));
	if (statement->private_data) {
		note_misuse("StatementNew: private_data not NULL");
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: StatementNew: not zeroed"));
	}
	statement->private_data = obj_new(sizeof(struct statement), K_STATEMENT, statement_destroy);
	live[L_STATEMENTS]++;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementRelease(struct AdbcStatement *statement, struct AdbcError *error)
{
	LOCK();
	AdbcStatusCode st = enter(F_StatementRelease, error);
	HANDLE(statement, s, statement, K_STATEMENT, StatementRelease);
	/* unbind calls foreign release callbacks: they must not find us locked
	 * out, but they never call back into the double. */
	obj_kill(&s->h);
	statement->private_data = NULL;
	RETURN(st);
}

#define STMT(fn) HANDLE(statement, s, statement, K_STATEMENT, fn)

static AdbcStatusCode StatementSetSqlQuery(struct AdbcStatement *statement, const char *query, struct AdbcError *error)
{
	LOCK();
	ENTER(StatementSetSqlQuery);
	STMT(StatementSetSqlQuery);
	if (!query)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: SetSqlQuery: NULL"));
	free(s->query);
	s->query = strdup(query);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementSetSubstraitPlan(struct AdbcStatement *statement, const uint8_t *plan, size_t length,
						struct AdbcError *error)
{
	LOCK();
	ENTER(StatementSetSubstraitPlan);
	STMT(StatementSetSubstraitPlan);
	if (!plan && length > 0)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: SetSubstraitPlan: NULL"));
	/* A plan is a query in the double's language. */
	free(s->query);
	s->query = calloc(1, length + 1);
	if (length)
		memcpy(s->query, plan, length);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementPrepare(struct AdbcStatement *statement, struct AdbcError *error)
{
	LOCK();
	ENTER(StatementPrepare);
	STMT(StatementPrepare);
	if (!s->query)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: Prepare: no query"));
	RETURN(ADBC_STATUS_OK);
}

/* parse_query reads "rows N [batch B]" (1) or "wait" (2); 0 otherwise. */
static int parse_query(const char *q, int64_t *n, int64_t *batch)
{
	char end;
	*batch = 4;
	if (!q)
		return 0;
	if (strcmp(q, "wait") == 0)
		return 2;
	if (sscanf(q, "rows %" SCNd64 " batch %" SCNd64 "%c", n, batch, &end) == 2 && *n >= 0 && *batch > 0)
		return 1;
	if (sscanf(q, "rows %" SCNd64 "%c", n, &end) == 1 && *n >= 0)
		return 1;
	return 0;
}

/* release_foreign calls a foreign struct's release once (lock dropped: it
 * is the caller's code). */
#define RELEASE_FOREIGN(p, counter)                 \
	do {                                        \
		if ((p)->release) {                 \
			UNLOCK();                   \
			(p)->release(p);            \
			LOCK();                     \
			counter++;                  \
		}                                   \
	} while (0)

static void unbind(struct statement *s)
{
	if (s->has_batch) {
		RELEASE_FOREIGN(&s->batch, foreign_arrays);
		RELEASE_FOREIGN(&s->batch_schema, foreign_schemas);
		s->has_batch = 0;
		live[L_BOUND]--;
	}
	if (s->has_stream) {
		RELEASE_FOREIGN(&s->stream, foreign_streams);
		s->has_stream = 0;
		live[L_BOUND]--;
	}
}

/* sum_batch adds a bound batch's rows, and the values of an int64 first
 * column, to the tallies. */
static void sum_batch(const struct ArrowSchema *sc, const struct ArrowArray *a)
{
	bound_rows += a->length;
	bound_batches++;
	if (sc->n_children < 1 || a->n_children < 1 || !sc->children || !a->children)
		return;
	const struct ArrowArray *c = a->children[0];
	if (strcmp(sc->children[0]->format, "l") != 0 || !c || c->n_buffers != 2 || !c->buffers[1])
		return;
	const int64_t *v = (const int64_t *)c->buffers[1] + c->offset + a->offset;
	const uint8_t *valid = c->buffers[0];
	for (int64_t i = 0; i < a->length; i++) {
		int64_t j = c->offset + a->offset + i;
		if (!valid || valid[j / 8] & (1 << (j % 8)))
			bound_sum += v[i];
	}
}

/* consume reads what is bound: a batch (kept until unbound), or a stream
 * (read to its end and released). Returns the rows, or -1 with error set. */
static int64_t consume(struct statement *s, struct AdbcError *error)
{
	int64_t before = bound_rows;
	if (s->has_batch)
		sum_batch(&s->batch_schema, &s->batch);
	if (s->has_stream) {
		struct ArrowArrayStream *st = &s->stream;
		struct ArrowSchema sc;
		memset(&sc, 0, sizeof sc);
		UNLOCK();
		int rc = st->get_schema(st, &sc);
		LOCK();
		const char *why = NULL;
		while (rc == 0) {
			struct ArrowArray a;
			memset(&a, 0, sizeof a);
			UNLOCK();
			rc = st->get_next(st, &a);
			LOCK();
			if (rc != 0 || !a.release)
				break;
			sum_batch(&sc, &a);
			RELEASE_FOREIGN(&a, foreign_arrays);
		}
		if (rc != 0) {
			UNLOCK();
			why = st->get_last_error ? st->get_last_error(st) : NULL;
			LOCK();
			fail_with(error, ADBC_STATUS_IO, NULL, "double: reading the bound stream: %s (%d)",
				  why ? why : "no message", rc);
		}
		RELEASE_FOREIGN(&sc, foreign_schemas);
		RELEASE_FOREIGN(st, foreign_streams);
		s->has_stream = 0;
		live[L_BOUND]--;
		if (rc != 0)
			return -1;
	}
	return bound_rows - before;
}

static AdbcStatusCode StatementExecuteQuery(struct AdbcStatement *statement, struct ArrowArrayStream *out,
					    int64_t *rows_affected, struct AdbcError *error)
{
	LOCK();
	ENTER(StatementExecuteQuery);
	STMT(StatementExecuteQuery);
	int64_t n, batch;
	int q = parse_query(s->query, &n, &batch);
	if (!s->query)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: ExecuteQuery: no query"));
	if (q == 0)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, "42601", "double: syntax error: %s", s->query));
	if (q == 2) {
		s->running = 1;
		s->cancelled = 0;
		struct timespec until = deadline_in(wait_ms);
		int rc = 0;
		while (!s->cancelled && rc == 0)
			rc = pthread_cond_timedwait(&cancel_cv, &mu, &until);
		s->running = 0;
		if (s->cancelled)
			RETURN(fail_with(error, ADBC_STATUS_CANCELLED, NULL, "double: cancelled"));
		RETURN(fail_with(error, ADBC_STATUS_TIMEOUT, NULL, "double: nobody cancelled the wait"));
	}
	int had = s->has_batch || s->has_stream;
	int64_t bound = consume(s, error);
	if (bound < 0)
		RETURN(ADBC_STATUS_IO);
	if (!out) {
		if (rows_affected)
			*rows_affected = had ? bound : n;
		RETURN(ADBC_STATUS_OK);
	}
	struct stream *st = stream_new(out, ST_RANGE);
	st->n = n;
	st->batch = batch;
	st->lie = lie_kind;
	st->lie_at = lie_at;
	if (rows_affected)
		*rows_affected = n;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementExecuteSchema(struct AdbcStatement *statement, struct ArrowSchema *schema,
					     struct AdbcError *error)
{
	LOCK();
	ENTER(StatementExecuteSchema);
	STMT(StatementExecuteSchema);
	int64_t n, batch;
	if (!schema)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: ExecuteSchema: NULL"));
	if (parse_query(s->query, &n, &batch) != 1)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: ExecuteSchema: no query of rows"));
	result_schema(schema);
	RETURN(ADBC_STATUS_OK);
}

/* Partitions: "part:0:N/2" and "part:N/2:N-N/2". */
struct partitions {
	struct obj h;
	const uint8_t *ptrs[2];
	size_t lens[2];
	char bufs[2][48];
};

static void partitions_destroy(struct obj *o)
{
	(void)o;
	live[L_PARTITIONS]--;
}

static void partitions_release(struct AdbcPartitions *p)
{
	LOCK();
	calls[F_partitions_release]++;
	if (!p || !p->release) {
		note_misuse("AdbcPartitions.release: released already");
		UNLOCK();
		return;
	}
	struct partitions *d = find(p->private_data, K_PARTITIONS, "AdbcPartitions.release");
	if (d)
		obj_kill(&d->h);
	p->release = NULL;
	p->private_data = NULL;
	UNLOCK();
}

static AdbcStatusCode StatementExecutePartitions(struct AdbcStatement *statement, struct ArrowSchema *schema,
						 struct AdbcPartitions *partitions, int64_t *rows_affected,
						 struct AdbcError *error)
{
	LOCK();
	ENTER(StatementExecutePartitions);
	STMT(StatementExecutePartitions);
	int64_t n, batch;
	if (!schema || !partitions)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: ExecutePartitions: NULL"));
	if (parse_query(s->query, &n, &batch) != 1)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, "42601", "double: syntax error: %s",
				 s->query ? s->query : "(none)"));
	struct partitions *d = obj_new(sizeof *d, K_PARTITIONS, partitions_destroy);
	live[L_PARTITIONS]++;
	int64_t half = n / 2;
	snprintf(d->bufs[0], sizeof d->bufs[0], "part:0:%" PRId64, half);
	snprintf(d->bufs[1], sizeof d->bufs[1], "part:%" PRId64 ":%" PRId64, half, n - half);
	for (int i = 0; i < 2; i++) {
		d->ptrs[i] = (const uint8_t *)d->bufs[i];
		d->lens[i] = strlen(d->bufs[i]);
	}
	partitions->num_partitions = 2;
	partitions->partitions = d->ptrs;
	partitions->partition_lengths = d->lens;
	partitions->private_data = d;
	partitions->release = partitions_release;
	result_schema(schema);
	if (rows_affected)
		*rows_affected = n;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementGetParameterSchema(struct AdbcStatement *statement, struct ArrowSchema *schema,
						  struct AdbcError *error)
{
	LOCK();
	ENTER(StatementGetParameterSchema);
	STMT(StatementGetParameterSchema);
	if (!schema)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: GetParameterSchema: NULL"));
	S(schema, "+s", "", 0, 1);
	S(K(schema, 0), "l", "p", 1, 0);
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementBind(struct AdbcStatement *statement, struct ArrowArray *values,
				    struct ArrowSchema *schema, struct AdbcError *error)
{
	LOCK();
	ENTER(StatementBind);
	STMT(StatementBind);
	if (!values || !schema || !values->release || !schema->release)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: Bind: NULL or released"));
	if (strcmp(schema->format, "+s") != 0 || schema->n_children != values->n_children)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: Bind: not a record batch"));
	unbind(s);
	/* Take them over: move. */
	s->batch = *values;
	s->batch_schema = *schema;
	values->release = NULL;
	schema->release = NULL;
	s->has_batch = 1;
	live[L_BOUND]++;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementBindStream(struct AdbcStatement *statement, struct ArrowArrayStream *stream,
					  struct AdbcError *error)
{
	LOCK();
	ENTER(StatementBindStream);
	STMT(StatementBindStream);
	if (!stream || !stream->release)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: BindStream: NULL or released"));
	unbind(s);
	s->stream = *stream;
	stream->release = NULL;
	s->has_stream = 1;
	live[L_BOUND]++;
	RETURN(ADBC_STATUS_OK);
}

static AdbcStatusCode StatementCancel(struct AdbcStatement *statement, struct AdbcError *error)
{
	LOCK();
	ENTER(StatementCancel);
	STMT(StatementCancel);
	s->cancelled = 1;
	pthread_cond_broadcast(&cancel_cv);
	RETURN(ADBC_STATUS_OK);
}

/* ---- options of the three objects ---------------------------------------- */

#define OPTION_FNS(Obj, obj, T, KIND)                                                                        \
	static AdbcStatusCode Obj##SetOption(struct Adbc##Obj *h, const char *key, const char *value,        \
					     struct AdbcError *error)                                        \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##SetOption);                                                                       \
		HANDLE(T, o, h, KIND, Obj##SetOption);                                                       \
		RETURN(set_opt(&o->opts, O_STRING, key, value, 0, 0, 0, error));                             \
	}                                                                                                    \
	static AdbcStatusCode Obj##SetOptionBytes(struct Adbc##Obj *h, const char *key, const uint8_t *value, \
						  size_t len, struct AdbcError *error)                       \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##SetOptionBytes);                                                                  \
		HANDLE(T, o, h, KIND, Obj##SetOptionBytes);                                                  \
		RETURN(set_opt(&o->opts, O_BYTES, key, value, len, 0, 0, error));                            \
	}                                                                                                    \
	static AdbcStatusCode Obj##SetOptionInt(struct Adbc##Obj *h, const char *key, int64_t value,         \
						struct AdbcError *error)                                     \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##SetOptionInt);                                                                    \
		HANDLE(T, o, h, KIND, Obj##SetOptionInt);                                                    \
		RETURN(set_opt(&o->opts, O_INT, key, NULL, 0, value, 0, error));                             \
	}                                                                                                    \
	static AdbcStatusCode Obj##SetOptionDouble(struct Adbc##Obj *h, const char *key, double value,       \
						   struct AdbcError *error)                                  \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##SetOptionDouble);                                                                 \
		HANDLE(T, o, h, KIND, Obj##SetOptionDouble);                                                 \
		RETURN(set_opt(&o->opts, O_DOUBLE, key, NULL, 0, 0, value, error));                          \
	}                                                                                                    \
	static AdbcStatusCode Obj##GetOption(struct Adbc##Obj *h, const char *key, char *value, size_t *len, \
					     struct AdbcError *error)                                        \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##GetOption);                                                                       \
		HANDLE(T, o, h, KIND, Obj##GetOption);                                                       \
		RETURN(get_buf(o->opts, O_STRING, key, value, len, error));                                  \
	}                                                                                                    \
	static AdbcStatusCode Obj##GetOptionBytes(struct Adbc##Obj *h, const char *key, uint8_t *value,      \
						  size_t *len, struct AdbcError *error)                      \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##GetOptionBytes);                                                                  \
		HANDLE(T, o, h, KIND, Obj##GetOptionBytes);                                                  \
		RETURN(get_buf(o->opts, O_BYTES, key, value, len, error));                                   \
	}                                                                                                    \
	static AdbcStatusCode Obj##GetOptionInt(struct Adbc##Obj *h, const char *key, int64_t *value,        \
						struct AdbcError *error)                                     \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##GetOptionInt);                                                                    \
		HANDLE(T, o, h, KIND, Obj##GetOptionInt);                                                    \
		RETURN(get_num(o->opts, O_INT, key, value, error));                                          \
	}                                                                                                    \
	static AdbcStatusCode Obj##GetOptionDouble(struct Adbc##Obj *h, const char *key, double *value,      \
						   struct AdbcError *error)                                  \
	{                                                                                                    \
		LOCK();                                                                                      \
		ENTER(Obj##GetOptionDouble);                                                                 \
		HANDLE(T, o, h, KIND, Obj##GetOptionDouble);                                                 \
		RETURN(get_num(o->opts, O_DOUBLE, key, value, error));                                       \
	}

OPTION_FNS(Database, database, database, K_DATABASE)
OPTION_FNS(Connection, connection, connection, K_CONNECTION)
OPTION_FNS(Statement, statement, statement, K_STATEMENT)

/* ---- 1.1 error functions ------------------------------------------------- */

static int ErrorGetDetailCount(const struct AdbcError *error)
{
	LOCK();
	calls[F_ErrorGetDetailCount]++;
	int n = 0;
	if (error && error->vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && error->private_data) {
		struct err_details *d = find(error->private_data, K_ERROR, "ErrorGetDetailCount");
		if (d)
			n = d->n;
	}
	UNLOCK();
	return n;
}

static struct AdbcErrorDetail ErrorGetDetail(const struct AdbcError *error, int index)
{
	struct AdbcErrorDetail out = {NULL, NULL, 0};
	LOCK();
	calls[F_ErrorGetDetail]++;
	if (error && error->vendor_code == ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA && error->private_data) {
		struct err_details *d = find(error->private_data, K_ERROR, "ErrorGetDetail");
		if (d && index >= 0 && index < d->n) {
			out.key = d->d[index].key;
			out.value = d->d[index].value;
			out.value_length = d->d[index].len;
		}
	}
	UNLOCK();
	return out;
}

static const struct AdbcError *ErrorFromArrayStream(struct ArrowArrayStream *st, AdbcStatusCode *status)
{
	LOCK();
	calls[F_ErrorFromArrayStream]++;
	const struct AdbcError *out = NULL;
	if (st && st->release == stream_release) {
		struct obj *o = is_object(st->private_data);
		if (o && o->kind == K_STREAM && !o->alive) {
			note_misuse("ErrorFromArrayStream: a stream released already");
		} else if (o && o->kind == K_STREAM) {
			struct stream *s = (struct stream *)o;
			if (s->failed && s->error.release) {
				out = &s->error;
				if (status)
					*status = s->status;
			} else if (mode_error_always) {
				/* The spec's "ADBC_STATUS_OK if there is no error". */
				out = &s->error;
				if (status)
					*status = ADBC_STATUS_OK;
			}
		} else {
			note_misuse("ErrorFromArrayStream: not a stream of the double");
		}
	}
	UNLOCK();
	return out;
}

/* ---- the driver ---------------------------------------------------------- */

static AdbcStatusCode DriverRelease(struct AdbcDriver *driver, struct AdbcError *error)
{
	LOCK();
	AdbcStatusCode st = enter(F_DriverRelease, error);
	if (!driver || !driver->private_data) {
		note_misuse("AdbcDriver.release: released already");
		RETURN(fail_with(error, ADBC_STATUS_INVALID_STATE, NULL, "double: driver released already"));
	}
	driver->private_data = NULL;
	driver->release = NULL;
	live[L_DRIVERS]--;
	RETURN(st);
}

static int driver_token; /* AdbcDriver.private_data: its address */

static void fill(struct AdbcDriver *d, int full)
{
	d->private_data = &driver_token;
	d->release = mode_null_release ? NULL : DriverRelease;
	d->DatabaseInit = DatabaseInit;
	d->DatabaseNew = DatabaseNew;
	d->DatabaseSetOption = DatabaseSetOption;
	d->DatabaseRelease = DatabaseRelease;
	d->ConnectionCommit = ConnectionCommit;
	d->ConnectionGetInfo = ConnectionGetInfo;
	d->ConnectionGetObjects = ConnectionGetObjects;
	d->ConnectionGetTableSchema = ConnectionGetTableSchema;
	d->ConnectionGetTableTypes = ConnectionGetTableTypes;
	d->ConnectionInit = ConnectionInit;
	d->ConnectionNew = ConnectionNew;
	d->ConnectionSetOption = ConnectionSetOption;
	d->ConnectionReadPartition = ConnectionReadPartition;
	d->ConnectionRelease = ConnectionRelease;
	d->ConnectionRollback = ConnectionRollback;
	d->StatementBind = StatementBind;
	d->StatementBindStream = StatementBindStream;
	d->StatementExecuteQuery = StatementExecuteQuery;
	d->StatementExecutePartitions = StatementExecutePartitions;
	d->StatementGetParameterSchema = StatementGetParameterSchema;
	d->StatementNew = StatementNew;
	d->StatementPrepare = StatementPrepare;
	d->StatementRelease = StatementRelease;
	d->StatementSetOption = StatementSetOption;
	d->StatementSetSqlQuery = StatementSetSqlQuery;
	d->StatementSetSubstraitPlan = StatementSetSubstraitPlan;
	if (!full)
		return;
	d->ErrorGetDetailCount = ErrorGetDetailCount;
	d->ErrorGetDetail = ErrorGetDetail;
	d->ErrorFromArrayStream = ErrorFromArrayStream;
	d->DatabaseGetOption = DatabaseGetOption;
	d->DatabaseGetOptionBytes = DatabaseGetOptionBytes;
	d->DatabaseGetOptionDouble = DatabaseGetOptionDouble;
	d->DatabaseGetOptionInt = DatabaseGetOptionInt;
	d->DatabaseSetOptionBytes = DatabaseSetOptionBytes;
	d->DatabaseSetOptionDouble = DatabaseSetOptionDouble;
	d->DatabaseSetOptionInt = DatabaseSetOptionInt;
	d->ConnectionCancel = ConnectionCancel;
	d->ConnectionGetOption = ConnectionGetOption;
	d->ConnectionGetOptionBytes = ConnectionGetOptionBytes;
	d->ConnectionGetOptionDouble = ConnectionGetOptionDouble;
	d->ConnectionGetOptionInt = ConnectionGetOptionInt;
	d->ConnectionGetStatistics = ConnectionGetStatistics;
	d->ConnectionGetStatisticNames = ConnectionGetStatisticNames;
	d->ConnectionSetOptionBytes = ConnectionSetOptionBytes;
	d->ConnectionSetOptionDouble = ConnectionSetOptionDouble;
	d->ConnectionSetOptionInt = ConnectionSetOptionInt;
	d->StatementCancel = StatementCancel;
	d->StatementExecuteSchema = StatementExecuteSchema;
	d->StatementGetOption = StatementGetOption;
	d->StatementGetOptionBytes = StatementGetOptionBytes;
	d->StatementGetOptionDouble = StatementGetOptionDouble;
	d->StatementGetOptionInt = StatementGetOptionInt;
	d->StatementSetOptionBytes = StatementSetOptionBytes;
	d->StatementSetOptionDouble = StatementSetOptionDouble;
	d->StatementSetOptionInt = StatementSetOptionInt;
}

static AdbcStatusCode driver_init(const char *entry, int version, void *raw, struct AdbcError *error)
{
	LOCK();
	snprintf(entry_used, sizeof entry_used, "%s", entry);
	ENTER(DriverInit);
	struct AdbcDriver *d = raw;
	if (!d)
		RETURN(fail_with(error, ADBC_STATUS_INVALID_ARGUMENT, NULL, "double: %s: NULL driver", entry));
	if (version == ADBC_VERSION_1_1_0 && mode_v100) {
		if (mode_scribble)
			fill(d, 1); /* then refuse: the manager must not trust it */
		RETURN(fail_with(error, ADBC_STATUS_NOT_IMPLEMENTED, NULL, "double: only ADBC 1.0.0"));
	}
	if (version != ADBC_VERSION_1_0_0 && version != ADBC_VERSION_1_1_0)
		RETURN(fail_with(error, ADBC_STATUS_NOT_IMPLEMENTED, NULL, "double: no ADBC version %d", version));
	if (version == ADBC_VERSION_1_0_0 && !mode_scribble)
		memset(d, 0, ADBC_DRIVER_1_0_0_SIZE);
	else if (version == ADBC_VERSION_1_1_0)
		memset(d, 0, ADBC_DRIVER_1_1_0_SIZE);
	fill(d, version == ADBC_VERSION_1_1_0 || mode_scribble);
	version_used = version;
	the_driver = d;
	if (!mode_null_release)
		live[L_DRIVERS]++;
	RETURN(ADBC_STATUS_OK);
}

EXPORT AdbcStatusCode AdbcDriverInit(int version, void *driver, struct AdbcError *error)
{
	return driver_init("AdbcDriverInit", version, driver, error);
}

/* An entry point named as DuckDB names its own (duckdb_adbc_init). */
EXPORT AdbcStatusCode double_adbc_init(int version, void *driver, struct AdbcError *error)
{
	return driver_init("double_adbc_init", version, driver, error);
}

/* The entry point Arrow's driver manager derives from libadbc_driver_double.so. */
EXPORT AdbcStatusCode AdbcDriverDoubleInit(int version, void *driver, struct AdbcError *error)
{
	return driver_init("AdbcDriverDoubleInit", version, driver, error);
}

/* ---- control functions for the tests ------------------------------------- */

static int fn_index(const char *name)
{
	for (int i = 0; name && i < NFUNCS; i++)
		if (strcmp(fn_names[i], name) == 0)
			return i;
	return -1;
}

static void clear_fails(void)
{
	for (int i = 0; i < nfails; i++) {
		free(fails[i].msg);
		for (int j = 0; j < fails[i].ndetails; j++) {
			free(fails[i].details[j].key);
			free(fails[i].details[j].value);
		}
	}
	memset(fails, 0, sizeof fails);
	nfails = last_armed = 0;
}

/* double_reset forgets failures, modes, lies, call counts and misuse, and
 * frees released objects. Live counters are kept: they are the truth. */
EXPORT void double_reset(void)
{
	LOCK();
	clear_fails();
	memset(calls, 0, sizeof calls);
	fired = 0;
	mode_v100 = mode_scribble = mode_null_release = mode_error_always = 0;
	wait_ms = 10000;
	init_gather = initing = 0;
	lie_kind = lie_at = 0;
	misuse = 0;
	misuse_msg[0] = 0;
	foreign_arrays = foreign_schemas = foreign_streams = 0;
	bound_rows = bound_sum = bound_batches = 0;
	entry_used[0] = 0;
	version_used = 0;
	struct obj **pp = &objects;
	while (*pp) {
		struct obj *o = *pp;
		if (!o->alive) {
			*pp = o->next;
			o->magic = 0;
			free(o);
		} else {
			pp = &o->next;
		}
	}
	UNLOCK();
}

/* double_fail arms a failure of the k-th call from now (k >= 1) of the
 * function named fn: status, message (empty: the error is left untouched),
 * SQLSTATE (5 chars, or NULL) and vendor code (used where no details are
 * given). Returns 0, or
 * -1 for an unknown or infallible function or a full table. */
EXPORT int double_fail(const char *fn, int k, int status, const char *msg, const char *sqlstate, int32_t vendor)
{
	LOCK();
	int i = fn_index(fn);
	int slot = nfails;
	for (int j = 0; j < nfails; j++)
		if (fails[j].fired)
			slot = j; /* a failure that fired: its slot is free again */
	if (i < 0 || !fn_failable[i] || slot == MAX_FAILS || !msg || k < 1) {
		UNLOCK();
		return -1;
	}
	struct failure *f = &fails[slot];
	free(f->msg);
	for (int j = 0; j < f->ndetails; j++) {
		free(f->details[j].key);
		free(f->details[j].value);
	}
	memset(f, 0, sizeof *f);
	if (slot == nfails)
		nfails++;
	last_armed = slot;
	f->fn = i;
	f->k = calls[i] + k;
	f->status = status;
	f->vendor = vendor;
	f->msg = strdup(msg);
	if (sqlstate)
		memcpy(f->sqlstate, sqlstate, 5);
	UNLOCK();
	return 0;
}

/* double_fail_detail adds a 1.1 error detail to the failure armed last. */
EXPORT int double_fail_detail(const char *key, const uint8_t *value, size_t len)
{
	LOCK();
	if (nfails == 0 || fails[last_armed].fired || fails[last_armed].ndetails == MAX_DETAILS || !key) {
		UNLOCK();
		return -1;
	}
	struct failure *f = &fails[last_armed];
	struct detail *d = &f->details[f->ndetails++];
	d->key = strdup(key);
	d->len = len;
	d->value = malloc(len ? len : 1);
	if (len)
		memcpy(d->value, value, len);
	UNLOCK();
	return 0;
}

EXPORT int64_t double_calls(const char *fn)
{
	LOCK();
	int i = fn_index(fn);
	int64_t n = i < 0 ? -1 : calls[i];
	UNLOCK();
	return n;
}

/* double_fired: failures that fired since the last reset. */
EXPORT int64_t double_fired(void)
{
	LOCK();
	int64_t n = fired;
	UNLOCK();
	return n;
}

/* double_fn_name: the name of function i (NULL past the last), and
 * whether double_fail can fail it. */
EXPORT const char *double_fn_name(int i)
{
	return i >= 0 && i < NFUNCS ? fn_names[i] : NULL;
}

EXPORT int double_fn_failable(int i)
{
	return i >= 0 && i < NFUNCS ? fn_failable[i] : 0;
}

EXPORT void double_set_version100(int on)
{
	LOCK();
	mode_v100 = on;
	UNLOCK();
}

/* double_set_init_gather has ConnectionInit wait for n at once (0: no). */
EXPORT void double_set_init_gather(int n)
{
	LOCK();
	init_gather = n;
	initing = 0;
	UNLOCK();
}

/* double_set_wait sets how long "wait" waits for a cancel (10 s). */
EXPORT void double_set_wait(int ms)
{
	LOCK();
	wait_ms = ms;
	UNLOCK();
}

EXPORT void double_set_scribble(int on)
{
	LOCK();
	mode_scribble = on;
	UNLOCK();
}

/* double_set_error_always: ErrorFromArrayStream answers every live stream
 * of the double, with ADBC_STATUS_OK and an empty error where the stream
 * has not failed (as adbc.h allows). */
EXPORT void double_set_error_always(int on)
{
	LOCK();
	mode_error_always = on;
	UNLOCK();
}

EXPORT void double_set_null_release(int on)
{
	LOCK();
	mode_null_release = on;
	UNLOCK();
}

/* double_lie makes the streams of the next ExecuteQuery calls lie (kind,
 * one of LIE_*) from batch at (0-based) on. Returns the number of kinds
 * for kind -1. */
EXPORT int double_lie(int kind, int at)
{
	if (kind < 0)
		return NLIES;
	LOCK();
	lie_kind = kind;
	lie_at = at;
	UNLOCK();
	return 0;
}

/* double_live: objects of a kind made and not yet released ("databases",
 * "connections", "statements", "streams", "arrays", "schemas", "errors",
 * "partitions", "bound", "drivers"); -1 for an unknown kind. */
EXPORT int64_t double_live(const char *what)
{
	LOCK();
	int64_t n = -1;
	for (int i = 0; what && i < NLIVE; i++)
		if (strcmp(live_names[i], what) == 0)
			n = live[i];
	UNLOCK();
	return n;
}

EXPORT const char *double_live_name(int i)
{
	return i >= 0 && i < NLIVE ? live_names[i] : NULL;
}

/* double_foreign: foreign structs the double released ("arrays",
 * "schemas", "streams"). */
EXPORT int64_t double_foreign(const char *what)
{
	LOCK();
	int64_t n = -1;
	if (strcmp(what, "arrays") == 0)
		n = foreign_arrays;
	else if (strcmp(what, "schemas") == 0)
		n = foreign_schemas;
	else if (strcmp(what, "streams") == 0)
		n = foreign_streams;
	UNLOCK();
	return n;
}

/* double_bound: rows, batches or the int64 sum read from bound parameters. */
EXPORT int64_t double_bound(const char *what)
{
	LOCK();
	int64_t n = -1;
	if (strcmp(what, "rows") == 0)
		n = bound_rows;
	else if (strcmp(what, "batches") == 0)
		n = bound_batches;
	else if (strcmp(what, "sum") == 0)
		n = bound_sum;
	UNLOCK();
	return n;
}

/* double_misuse: calls on released or foreign objects since the last
 * reset; double_misuse_msg says what the last one was. */
EXPORT int64_t double_misuse(void)
{
	LOCK();
	int64_t n = misuse;
	UNLOCK();
	return n;
}

EXPORT const char *double_misuse_msg(void)
{
	return misuse_msg;
}

/* double_entry: the entry point called last; double_version: the version
 * it accepted last. */
EXPORT const char *double_entry(void)
{
	return entry_used;
}

EXPORT int double_version(void)
{
	return version_used;
}
