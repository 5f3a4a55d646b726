/*
 * The C side of cdevice's C Data Interface tests.
 *
 * Producers fill caller-provided structs with known data (the Go tests build
 * the same data with arrow-go builders and compare). Consumers check structs
 * that Go exported and release them. Malformed producers make struct pairs
 * that a validating importer must reject. Every struct made here is counted,
 * so tests can assert that each release ran exactly once.
 *
 * Plain C99 apart from the __atomic builtins. Errors are reported through one
 * process-wide message buffer (ct_last_error), so checks are not meant to run
 * concurrently; the counters are atomic because releases may run on any
 * thread.
 *
 * The functions the Go tests call (here and in the other test sources) take
 * and return integers as int, int32_t or intptr_t, never int64_t by value:
 * Go passes each argument in one pointer-sized slot and reads one result
 * register, and on 32-bit targets an int64_t takes two.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_abi.h"

/* ---- counters and errors ----------------------------------------------- */

static int64_t produced_count;
static int64_t released_count;

static void count_produced(void) { __atomic_add_fetch(&produced_count, 1, __ATOMIC_SEQ_CST); }
static void count_released(void) { __atomic_add_fetch(&released_count, 1, __ATOMIC_SEQ_CST); }

/* Release callbacks run by any struct this library produced. */
intptr_t ct_release_count(void) { return __atomic_load_n(&released_count, __ATOMIC_SEQ_CST); }

/* Structs produced minus structs released. */
intptr_t ct_live_count(void)
{
	return __atomic_load_n(&produced_count, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&released_count, __ATOMIC_SEQ_CST);
}

static char last_error[1024];

const char *ct_last_error(void) { return last_error; }

static int fail(int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(last_error, sizeof last_error, "[%d] ", code);
	va_start(ap, fmt);
	vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* ---- allocation --------------------------------------------------------- */

/* A test library may abort on out-of-memory; it keeps every caller simple. */
static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n;
	char *p;
	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	p = xcalloc(n, 1);
	memcpy(p, s, n);
	return p;
}

/* ---- schemas ------------------------------------------------------------ */

/*
 * The private data keeps its own copies of every pointer it owns, so a
 * malformed case may overwrite the public fields (format, children, ...)
 * and release still frees exactly what was allocated.
 */
struct schema_priv {
	char *format, *name, *metadata;
	int64_t n_kids;
	struct ArrowSchema **kids;     /* owned child structs */
	struct ArrowSchema **children; /* the array the public field points at */
	struct ArrowSchema *dictionary;
};

static void free_schema_struct(struct ArrowSchema *s)
{
	if (s == NULL)
		return;
	if (s->release != NULL)
		s->release(s);
	free(s);
}

static void schema_release(struct ArrowSchema *s)
{
	struct schema_priv *p = s->private_data;
	int64_t i;
	for (i = 0; i < p->n_kids; i++)
		free_schema_struct(p->kids[i]);
	free(p->kids);
	free(p->children);
	free_schema_struct(p->dictionary);
	free(p->format);
	free(p->name);
	free(p->metadata);
	free(p);
	s->release = NULL;
	s->private_data = NULL;
	count_released();
}

static void schema_init(struct ArrowSchema *s, const char *format, const char *name, int64_t flags,
                        int64_t n_children)
{
	struct schema_priv *p = xcalloc(1, sizeof *p);
	int64_t i;
	memset(s, 0, sizeof *s);
	p->format = xstrdup(format);
	p->name = xstrdup(name);
	p->n_kids = n_children;
	p->kids = xcalloc((size_t)n_children, sizeof *p->kids);
	p->children = xcalloc((size_t)n_children, sizeof *p->children);
	for (i = 0; i < n_children; i++)
		p->children[i] = p->kids[i] = xcalloc(1, sizeof(struct ArrowSchema));
	s->format = p->format;
	s->name = p->name;
	s->flags = flags;
	s->n_children = n_children;
	s->children = n_children > 0 ? p->children : NULL;
	s->release = schema_release;
	s->private_data = p;
	count_produced();
}

static struct ArrowSchema *schema_kid(struct ArrowSchema *s, int64_t i)
{
	return ((struct schema_priv *)s->private_data)->kids[i];
}

static struct ArrowSchema *schema_add_dictionary(struct ArrowSchema *s)
{
	struct schema_priv *p = s->private_data;
	p->dictionary = xcalloc(1, sizeof *p->dictionary);
	s->dictionary = p->dictionary;
	return p->dictionary;
}

static void schema_raw_metadata(struct ArrowSchema *s, const void *blob, size_t size)
{
	struct schema_priv *p = s->private_data;
	p->metadata = xcalloc(size, 1);
	memcpy(p->metadata, blob, size);
	s->metadata = p->metadata;
}

/* kv holds npairs key/value pairs, key first. */
static void schema_metadata(struct ArrowSchema *s, int32_t npairs, const char *const *kv)
{
	size_t size = 4, off = 0;
	int32_t i, len;
	char *blob;
	for (i = 0; i < 2 * npairs; i++)
		size += 4 + strlen(kv[i]);
	blob = xcalloc(size, 1);
	memcpy(blob, &npairs, 4);
	off = 4;
	for (i = 0; i < 2 * npairs; i++) {
		len = (int32_t)strlen(kv[i]);
		memcpy(blob + off, &len, 4);
		memcpy(blob + off + 4, kv[i], (size_t)len);
		off += 4 + (size_t)len;
	}
	schema_raw_metadata(s, blob, size);
	free(blob);
}

/* ---- arrays ------------------------------------------------------------- */

#define MAX_OWNED 8

struct array_priv {
	int64_t n_bufs;
	const void **buffers; /* the array the public field points at */
	void *owned[MAX_OWNED];
	int n_owned;
	int64_t n_kids;
	struct ArrowArray **kids;     /* owned child structs */
	struct ArrowArray **children; /* the array the public field points at */
	struct ArrowArray *dictionary;
};

static void free_array_struct(struct ArrowArray *a)
{
	if (a == NULL)
		return;
	if (a->release != NULL) /* NULL: released, or moved out by a consumer */
		a->release(a);
	free(a);
}

static void array_release(struct ArrowArray *a)
{
	struct array_priv *p = a->private_data;
	int64_t i;
	int k;
	for (i = 0; i < p->n_kids; i++)
		free_array_struct(p->kids[i]);
	free(p->kids);
	free(p->children);
	free_array_struct(p->dictionary);
	for (k = 0; k < p->n_owned; k++)
		free(p->owned[k]);
	free(p->buffers);
	free(p);
	a->release = NULL;
	a->private_data = NULL;
	count_released();
}

static void array_init(struct ArrowArray *a, int64_t length, int64_t null_count, int64_t n_buffers,
                       int64_t n_children)
{
	struct array_priv *p = xcalloc(1, sizeof *p);
	int64_t i;
	memset(a, 0, sizeof *a);
	p->n_bufs = n_buffers;
	p->buffers = xcalloc((size_t)n_buffers, sizeof *p->buffers);
	p->n_kids = n_children;
	p->kids = xcalloc((size_t)n_children, sizeof *p->kids);
	p->children = xcalloc((size_t)n_children, sizeof *p->children);
	for (i = 0; i < n_children; i++)
		p->children[i] = p->kids[i] = xcalloc(1, sizeof(struct ArrowArray));
	a->length = length;
	a->null_count = null_count;
	a->n_buffers = n_buffers;
	a->n_children = n_children;
	a->buffers = p->buffers;
	a->children = n_children > 0 ? p->children : NULL;
	a->release = array_release;
	a->private_data = p;
	count_produced();
}

/* A zeroed buffer of size bytes, owned by a, at buffers[i] (i < 0: owned only). */
static void *array_buffer(struct ArrowArray *a, int64_t i, size_t size)
{
	struct array_priv *p = a->private_data;
	void *mem = xcalloc(size, 1);
	if (p->n_owned == MAX_OWNED)
		abort();
	p->owned[p->n_owned++] = mem;
	if (i >= 0)
		p->buffers[i] = mem;
	return mem;
}

static struct ArrowArray *array_kid(struct ArrowArray *a, int64_t i)
{
	return ((struct array_priv *)a->private_data)->kids[i];
}

static struct ArrowArray *array_add_dictionary(struct ArrowArray *a)
{
	struct array_priv *p = a->private_data;
	p->dictionary = xcalloc(1, sizeof *p->dictionary);
	a->dictionary = p->dictionary;
	return p->dictionary;
}

static size_t bitmap_bytes(int64_t n) { return (size_t)((n + 7) / 8); }
static void bit_set(uint8_t *bm, int64_t i) { bm[i / 8] |= (uint8_t)(1u << (i % 8)); }
static int bit_get(const uint8_t *bm, int64_t i) { return (bm[i / 8] >> (i % 8)) & 1; }

static int is_null_at(int64_t i, int64_t mod, int64_t rem) { return mod > 0 && i % mod == rem; }

/* ---- column builders (s or a may be NULL) -------------------------------- */

/* int32: value i*mul, null where i % null_mod == null_rem (null_mod 0: none). */
static void fill_int32(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                       int64_t n, int64_t mul, int64_t null_mod, int64_t null_rem)
{
	int64_t i, nulls = 0;
	int32_t *v;
	uint8_t *bm = NULL;
	if (s != NULL)
		schema_init(s, "i", name, flags, 0);
	if (a == NULL)
		return;
	for (i = 0; i < n; i++)
		nulls += is_null_at(i, null_mod, null_rem);
	array_init(a, n, nulls, 2, 0);
	v = array_buffer(a, 1, (size_t)n * 4);
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	for (i = 0; i < n; i++) {
		v[i] = (int32_t)(i * mul);
		if (bm != NULL && !is_null_at(i, null_mod, null_rem))
			bit_set(bm, i);
	}
}

/* A string generator returns row i's value, or NULL for a null row. */
typedef const char *(*strgen)(int64_t i, char *buf, size_t cap, const void *ctx);

struct strpat {
	const char *prefix;
	int64_t mul, add;         /* the number printed is i*mul + add */
	int64_t null_mod, null_rem;
};

static const char *gen_pattern(int64_t i, char *buf, size_t cap, const void *ctx)
{
	const struct strpat *p = ctx;
	if (is_null_at(i, p->null_mod, p->null_rem))
		return NULL;
	snprintf(buf, cap, "%s%" PRId64, p->prefix, i * p->mul + p->add);
	return buf;
}

static const char *gen_list(int64_t i, char *buf, size_t cap, const void *ctx)
{
	(void)buf;
	(void)cap;
	return ((const char *const *)ctx)[i];
}

static void fill_utf8(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                      int64_t n, strgen gen, const void *ctx)
{
	char buf[64];
	const char *str;
	int64_t i, nulls = 0, total = 0;
	int32_t *offsets;
	char *data;
	uint8_t *bm = NULL;
	if (s != NULL)
		schema_init(s, "u", name, flags, 0);
	if (a == NULL)
		return;
	for (i = 0; i < n; i++) {
		str = gen(i, buf, sizeof buf, ctx);
		if (str == NULL)
			nulls++;
		else
			total += (int64_t)strlen(str);
	}
	array_init(a, n, nulls, 3, 0);
	offsets = array_buffer(a, 1, (size_t)(n + 1) * 4);
	data = array_buffer(a, 2, (size_t)total);
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	total = 0;
	for (i = 0; i < n; i++) {
		str = gen(i, buf, sizeof buf, ctx);
		if (str != NULL) {
			memcpy(data + total, str, strlen(str));
			total += (int64_t)strlen(str);
			if (bm != NULL)
				bit_set(bm, i);
		}
		offsets[i + 1] = (int32_t)total;
	}
}

/* list<int64>: row i is null when i%5 == 4, else has i%4 items counting up from 0. */
static void fill_list_int64(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                            int64_t n)
{
	int64_t i, k, nulls = 0, total = 0;
	int32_t *offsets;
	int64_t *values;
	uint8_t *bm = NULL;
	struct ArrowArray *child;
	if (s != NULL) {
		schema_init(s, "+l", name, flags, 1);
		schema_init(schema_kid(s, 0), "l", "item", ARROW_FLAG_NULLABLE, 0);
	}
	if (a == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (is_null_at(i, 5, 4))
			nulls++;
		else
			total += i % 4;
	}
	array_init(a, n, nulls, 2, 1);
	offsets = array_buffer(a, 1, (size_t)(n + 1) * 4);
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	child = array_kid(a, 0);
	array_init(child, total, 0, 2, 0);
	values = array_buffer(child, 1, (size_t)total * 8);
	for (k = 0; k < total; k++)
		values[k] = k;
	total = 0;
	for (i = 0; i < n; i++) {
		if (!is_null_at(i, 5, 4)) {
			total += i % 4;
			if (bm != NULL)
				bit_set(bm, i);
		}
		offsets[i + 1] = (int32_t)total;
	}
}

/* struct<a: int32 (value i, null when odd), b: utf8 ("b<i>", metadata k=v)>. */
static void fill_struct(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                        int64_t n)
{
	static const char *const kv[] = {"k", "v"};
	struct strpat pb = {"b", 1, 0, 0, 0};
	if (s != NULL) {
		schema_init(s, "+s", name, flags, 2);
		fill_int32(schema_kid(s, 0), NULL, "a", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
		fill_utf8(schema_kid(s, 1), NULL, "b", 0, 0, gen_pattern, &pb);
		schema_metadata(schema_kid(s, 1), 1, kv);
	}
	if (a == NULL)
		return;
	array_init(a, n, 0, 1, 2);
	fill_int32(NULL, array_kid(a, 0), NULL, 0, n, 1, 2, 1);
	fill_utf8(NULL, array_kid(a, 1), NULL, 0, n, gen_pattern, &pb);
}

/* dictionary<int16, utf8 ["red","green","blue"]>, ordered: index i%3, null when i%5 == 4. */
static void fill_dict_utf8(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                           int64_t n)
{
	static const char *const colors[] = {"red", "green", "blue"};
	int64_t i, nulls = 0;
	int16_t *idx;
	uint8_t *bm = NULL;
	if (s != NULL) {
		schema_init(s, "s", name, flags | ARROW_FLAG_DICTIONARY_ORDERED, 0);
		fill_utf8(schema_add_dictionary(s), NULL, NULL, 0, 0, gen_list, colors);
	}
	if (a == NULL)
		return;
	for (i = 0; i < n; i++)
		nulls += is_null_at(i, 5, 4);
	array_init(a, n, nulls, 2, 0);
	idx = array_buffer(a, 1, (size_t)n * 2);
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	for (i = 0; i < n; i++) {
		idx[i] = (int16_t)(i % 3);
		if (bm != NULL && !is_null_at(i, 5, 4))
			bit_set(bm, i);
	}
	fill_utf8(NULL, array_add_dictionary(a), NULL, 0, 3, gen_list, colors);
}

/*
 * union<5: int32 "i", 7: utf8 "s">: even rows are type 5 with value i, odd
 * rows type 7 with value "u<i>".
 */
static void fill_union(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                       int64_t n, int dense)
{
	int64_t i;
	int8_t *types;
	int32_t *offsets;
	if (s != NULL) {
		struct strpat none = {"", 1, 0, 0, 0};
		schema_init(s, dense ? "+ud:5,7" : "+us:5,7", name, flags, 2);
		fill_int32(schema_kid(s, 0), NULL, "i", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
		fill_utf8(schema_kid(s, 1), NULL, "s", ARROW_FLAG_NULLABLE, 0, gen_pattern, &none);
	}
	if (a == NULL)
		return;
	array_init(a, n, 0, dense ? 2 : 1, 2);
	types = array_buffer(a, 0, (size_t)n);
	for (i = 0; i < n; i++)
		types[i] = (int8_t)(i % 2 == 0 ? 5 : 7);
	if (dense) {
		struct strpat odd = {"u", 2, 1, 0, 0};
		offsets = array_buffer(a, 1, (size_t)n * 4);
		for (i = 0; i < n; i++)
			offsets[i] = (int32_t)(i / 2);
		fill_int32(NULL, array_kid(a, 0), NULL, 0, (n + 1) / 2, 2, 0, 0);
		fill_utf8(NULL, array_kid(a, 1), NULL, 0, n / 2, gen_pattern, &odd);
	} else {
		struct strpat all = {"u", 1, 0, 0, 0};
		fill_int32(NULL, array_kid(a, 0), NULL, 0, n, 1, 0, 0);
		fill_utf8(NULL, array_kid(a, 1), NULL, 0, n, gen_pattern, &all);
	}
}

/* bool: true when i%3 == 0, null when i%7 == 6. */
static void fill_bool(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                      int64_t n)
{
	int64_t i, nulls = 0;
	uint8_t *v, *bm = NULL;
	if (s != NULL)
		schema_init(s, "b", name, flags, 0);
	if (a == NULL)
		return;
	for (i = 0; i < n; i++)
		nulls += is_null_at(i, 7, 6);
	array_init(a, n, nulls, 2, 0);
	v = array_buffer(a, 1, bitmap_bytes(n));
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	for (i = 0; i < n; i++) {
		if (i % 3 == 0)
			bit_set(v, i);
		if (bm != NULL && !is_null_at(i, 7, 6))
			bit_set(bm, i);
	}
}

/*
 * int64 at offset 3 into a buffer of n+5 slots: slot j holds j*10 and is
 * null when j%4 == 0; null_count is -1 (unknown), as producers may say.
 */
static void fill_sliced_int64(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                              int64_t n)
{
	int64_t j, total = n + 5;
	int64_t *v;
	uint8_t *bm;
	if (s != NULL)
		schema_init(s, "l", name, flags, 0);
	if (a == NULL)
		return;
	array_init(a, n, -1, 2, 0);
	a->offset = 3;
	v = array_buffer(a, 1, (size_t)total * 8);
	bm = array_buffer(a, 0, bitmap_bytes(total));
	for (j = 0; j < total; j++) {
		v[j] = j * 10;
		if (j % 4 != 0)
			bit_set(bm, j);
	}
}

/*
 * utf8_view: row i is null when i%5 == 2; else "sv<i>" (inline) when i%3 == 0,
 * else "string view number <i>" (> 12 bytes) in variadic buffer i%2.
 */
static const char *gen_view(int64_t i, char *buf, size_t cap, const void *ctx)
{
	(void)ctx;
	if (i % 5 == 2)
		return NULL;
	if (i % 3 == 0)
		snprintf(buf, cap, "sv%" PRId64, i);
	else
		snprintf(buf, cap, "string view number %" PRId64, i);
	return buf;
}

static void fill_string_view(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags,
                             int64_t n)
{
	char buf[64];
	const char *str;
	int64_t i, nulls = 0, sizes[2] = {0, 0};
	int64_t *sizebuf;
	uint8_t *views, *bm = NULL;
	char *data[2];
	int32_t len, b, off;
	if (s != NULL)
		schema_init(s, "vu", name, flags, 0);
	if (a == NULL)
		return;
	for (i = 0; i < n; i++) {
		str = gen_view(i, buf, sizeof buf, NULL);
		if (str == NULL)
			nulls++;
		else if (strlen(str) > 12)
			sizes[i % 2] += (int64_t)strlen(str);
	}
	/* validity, views, two variadic data buffers, variadic sizes */
	array_init(a, n, nulls, 5, 0);
	if (nulls > 0)
		bm = array_buffer(a, 0, bitmap_bytes(n));
	views = array_buffer(a, 1, (size_t)n * 16);
	data[0] = array_buffer(a, 2, (size_t)sizes[0]);
	data[1] = array_buffer(a, 3, (size_t)sizes[1]);
	sizebuf = array_buffer(a, 4, 2 * 8);
	sizebuf[0] = sizes[0];
	sizebuf[1] = sizes[1];
	sizes[0] = sizes[1] = 0;
	for (i = 0; i < n; i++) {
		uint8_t *v = views + 16 * i;
		str = gen_view(i, buf, sizeof buf, NULL);
		if (str == NULL)
			continue;
		if (bm != NULL)
			bit_set(bm, i);
		len = (int32_t)strlen(str);
		memcpy(v, &len, 4);
		if (len <= 12) {
			memcpy(v + 4, str, (size_t)len);
			continue;
		}
		b = (int32_t)(i % 2);
		off = (int32_t)sizes[b];
		memcpy(v + 4, str, 4);
		memcpy(v + 8, &b, 4);
		memcpy(v + 12, &off, 4);
		memcpy(data[b] + off, str, (size_t)len);
		sizes[b] += len;
	}
}

/*
 * run_end_encoded<int32, float64>: run k is (k%3)+1 rows long (the last run
 * cut at n) with value k*1.5, null when k%4 == 3.
 */
static void fill_ree(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t flags, int64_t n)
{
	int64_t k, pos, runs = 0, nulls = 0;
	int32_t *ends;
	double *vals;
	uint8_t *bm = NULL;
	struct ArrowArray *re, *va;
	if (s != NULL) {
		schema_init(s, "+r", name, flags, 2);
		schema_init(schema_kid(s, 0), "i", "run_ends", 0, 0);
		schema_init(schema_kid(s, 1), "g", "values", ARROW_FLAG_NULLABLE, 0);
	}
	if (a == NULL)
		return;
	for (pos = 0; pos < n; runs++) {
		pos += runs % 3 + 1;
		nulls += is_null_at(runs, 4, 3);
	}
	array_init(a, n, 0, 0, 2);
	re = array_kid(a, 0);
	va = array_kid(a, 1);
	array_init(re, runs, 0, 2, 0);
	array_init(va, runs, nulls, 2, 0);
	ends = array_buffer(re, 1, (size_t)runs * 4);
	vals = array_buffer(va, 1, (size_t)runs * 8);
	if (nulls > 0)
		bm = array_buffer(va, 0, bitmap_bytes(runs));
	for (k = 0, pos = 0; k < runs; k++) {
		pos += k % 3 + 1;
		ends[k] = (int32_t)(pos < n ? pos : n);
		vals[k] = (double)k * 1.5;
		if (bm != NULL && !is_null_at(k, 4, 3))
			bit_set(bm, k);
	}
}

/* ---- producers ---------------------------------------------------------- */

static int bad_args(const void *s, const void *a, int64_t n) { return (s == NULL && a == NULL) || n < 0; }

int ct_make_int32(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n, int with_nulls)
{
	if (bad_args(s, a, n))
		return -1;
	fill_int32(s, a, "int32", ARROW_FLAG_NULLABLE, n, 3, with_nulls ? 3 : 0, 2);
	return 0;
}

int ct_make_utf8(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n)
{
	struct strpat p = {"s", 1, 0, 4, 3};
	if (bad_args(s, a, n))
		return -1;
	fill_utf8(s, a, "utf8", ARROW_FLAG_NULLABLE, n, gen_pattern, &p);
	return 0;
}

/* ct_make_<name>(schema, array, n): n values of one type, made by fill (its
 * extra arguments last); -1 for bad arguments. */
#define CT_MAKER(name, fill, label, ...)                                        \
	int ct_make_##name(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n) \
	{                                                                       \
		if (bad_args(s, a, n))                                          \
			return -1;                                              \
		fill(s, a, label, ARROW_FLAG_NULLABLE, n, ##__VA_ARGS__);       \
		return 0;                                                       \
	}
CT_MAKER(list_int64, fill_list_int64, "list")
CT_MAKER(struct, fill_struct, "struct")
CT_MAKER(dict_utf8, fill_dict_utf8, "dict")
CT_MAKER(sparse_union, fill_union, "sparse", 0)
CT_MAKER(dense_union, fill_union, "dense", 1)
CT_MAKER(bool, fill_bool, "bool")
CT_MAKER(sliced_int64, fill_sliced_int64, "sliced")
CT_MAKER(string_view, fill_string_view, "view")
CT_MAKER(ree, fill_ree, "ree")
#undef CT_MAKER

/*
 * A record batch: struct<ints: int32 (with nulls), strs: utf8, lists:
 * list<int64>, flags: bool, dict: dictionary<int16, utf8>, point: struct,
 * views: utf8_view> with schema metadata origin=cdata.c, purpose=test.
 */
int ct_make_record_batch(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n)
{
	static const char *const kv[] = {"origin", "cdata.c", "purpose", "test"};
	struct strpat p = {"s", 1, 0, 4, 3};
	struct ArrowSchema *sk[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	struct ArrowArray *ak[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	int i;
	if (bad_args(s, a, n))
		return -1;
	if (s != NULL) {
		schema_init(s, "+s", "", 0, 7);
		schema_metadata(s, 2, kv);
		for (i = 0; i < 7; i++)
			sk[i] = schema_kid(s, i);
	}
	if (a != NULL) {
		array_init(a, n, 0, 1, 7);
		for (i = 0; i < 7; i++)
			ak[i] = array_kid(a, i);
	}
	fill_int32(sk[0], ak[0], "ints", ARROW_FLAG_NULLABLE, n, 3, 3, 2);
	fill_utf8(sk[1], ak[1], "strs", ARROW_FLAG_NULLABLE, n, gen_pattern, &p);
	fill_list_int64(sk[2], ak[2], "lists", ARROW_FLAG_NULLABLE, n);
	fill_bool(sk[3], ak[3], "flags", ARROW_FLAG_NULLABLE, n);
	fill_dict_utf8(sk[4], ak[4], "dict", ARROW_FLAG_NULLABLE, n);
	fill_struct(sk[5], ak[5], "point", ARROW_FLAG_NULLABLE, n);
	fill_string_view(sk[6], ak[6], "views", ARROW_FLAG_NULLABLE, n);
	return 0;
}

#define CT_DEVICE_ROWS 10

/* A CPU device array: the int32 column of ct_make_int32(n=10, with nulls). */
int ct_make_device_array_cpu(struct ArrowSchema *s, struct ArrowDeviceArray *da)
{
	if (s == NULL && da == NULL)
		return -1;
	if (da != NULL)
		memset(da, 0, sizeof *da);
	fill_int32(s, da != NULL ? &da->array : NULL, "int32", ARROW_FLAG_NULLABLE, CT_DEVICE_ROWS, 3, 3, 2);
	if (da != NULL) {
		da->device_id = -1;
		da->device_type = ARROW_DEVICE_CPU;
		da->sync_event = NULL;
	}
	return 0;
}

/* ---- consumers ---------------------------------------------------------- */

/* Releases what the caller handed over, and checks that release NULLed itself. */
static int release_pair(struct ArrowSchema *s, struct ArrowArray *a)
{
	int rc = 0;
	if (a != NULL && a->release != NULL) {
		a->release(a);
		if (a->release != NULL)
			rc = fail(100, "array release did not set release to NULL");
	}
	if (s != NULL && s->release != NULL) {
		s->release(s);
		if (s->release != NULL && rc == 0)
			rc = fail(101, "schema release did not set release to NULL");
	}
	return rc;
}

static int check_inputs(struct ArrowSchema *s, struct ArrowArray *a, const char *format)
{
	if (s == NULL || a == NULL)
		return fail(1, "NULL schema or array");
	if (s->release == NULL)
		return fail(2, "schema is released");
	if (a->release == NULL)
		return fail(3, "array is released");
	if (s->format == NULL || strcmp(s->format, format) != 0)
		return fail(4, "format %s%s%s, want \"%s\"", s->format ? "\"" : "",
		            s->format ? s->format : "NULL", s->format ? "\"" : "", format);
	return 0;
}

static int valid_at(const struct ArrowArray *a, int64_t i)
{
	const uint8_t *bm = a->buffers[0];
	return bm == NULL || bit_get(bm, a->offset + i);
}

static int check_int32_body(struct ArrowArray *a, int64_t n, int64_t mul, int64_t null_mod, int64_t null_rem)
{
	int64_t i, nulls = 0;
	const int32_t *v;
	for (i = 0; i < n; i++)
		nulls += is_null_at(i, null_mod, null_rem);
	if (a->length != n)
		return fail(10, "length %" PRId64 ", want %" PRId64, a->length, n);
	if (a->offset < 0)
		return fail(11, "offset %" PRId64, a->offset);
	if (a->null_count != nulls)
		return fail(12, "null_count %" PRId64 ", want %" PRId64, a->null_count, nulls);
	if (a->n_buffers != 2 || a->buffers == NULL)
		return fail(13, "n_buffers %" PRId64 " (buffers %p), want 2", a->n_buffers, (void *)a->buffers);
	if (a->n_children != 0)
		return fail(14, "n_children %" PRId64 ", want 0", a->n_children);
	if (nulls > 0 && a->buffers[0] == NULL)
		return fail(15, "no validity bitmap with %" PRId64 " nulls", nulls);
	v = a->buffers[1];
	if (n > 0 && v == NULL)
		return fail(16, "NULL data buffer");
	for (i = 0; i < n; i++) {
		int want_valid = !is_null_at(i, null_mod, null_rem);
		if (valid_at(a, i) != want_valid)
			return fail(17, "row %" PRId64 ": valid=%d, want %d", i, !want_valid, want_valid);
		if (want_valid && v[a->offset + i] != (int32_t)(i * mul))
			return fail(18, "row %" PRId64 ": value %" PRId32 ", want %" PRId64, i, v[a->offset + i],
			            i * mul);
	}
	return 0;
}

/* Checks ct_make_int32's data (format "i", values i*3, null when i%3 == 2 if with_nulls), releases both. */
int ct_check_int32(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n, int with_nulls)
{
	int rc = check_inputs(s, a, "i");
	if (rc == 0)
		rc = check_int32_body(a, n, 3, with_nulls ? 3 : 0, 2);
	if (rc == 0)
		rc = release_pair(s, a);
	else
		release_pair(s, a);
	return rc;
}

static int check_utf8_body(struct ArrowArray *a, int64_t n, strgen gen, const void *ctx)
{
	char buf[64];
	const char *str;
	const int32_t *offsets;
	const char *data;
	int64_t i, j, nulls = 0;
	for (i = 0; i < n; i++)
		nulls += gen(i, buf, sizeof buf, ctx) == NULL;
	if (a->length != n)
		return fail(30, "length %" PRId64 ", want %" PRId64, a->length, n);
	if (a->offset < 0)
		return fail(31, "offset %" PRId64, a->offset);
	if (a->null_count != nulls)
		return fail(32, "null_count %" PRId64 ", want %" PRId64, a->null_count, nulls);
	if (a->n_buffers != 3 || a->buffers == NULL)
		return fail(33, "n_buffers %" PRId64 ", want 3", a->n_buffers);
	if (nulls > 0 && a->buffers[0] == NULL)
		return fail(34, "no validity bitmap with %" PRId64 " nulls", nulls);
	offsets = a->buffers[1];
	data = a->buffers[2];
	if (n > 0 && offsets == NULL)
		return fail(35, "NULL offsets buffer");
	for (i = 0; i < n; i++) {
		j = a->offset + i;
		if (offsets[j + 1] < offsets[j])
			return fail(36, "offsets decrease at row %" PRId64, i);
		str = gen(i, buf, sizeof buf, ctx);
		if (valid_at(a, i) != (str != NULL))
			return fail(37, "row %" PRId64 ": valid=%d, want %d", i, str == NULL, str != NULL);
		if (str == NULL)
			continue;
		if ((size_t)(offsets[j + 1] - offsets[j]) != strlen(str) ||
		    (strlen(str) > 0 && (data == NULL || memcmp(data + offsets[j], str, strlen(str)) != 0)))
			return fail(38, "row %" PRId64 ": wrong string, want \"%s\"", i, str);
	}
	return 0;
}

/* Checks ct_make_utf8's data (format "u", "s<i>", null when i%4 == 3), releases both. */
int ct_check_utf8(struct ArrowSchema *s, struct ArrowArray *a, intptr_t n)
{
	struct strpat p = {"s", 1, 0, 4, 3};
	int rc = check_inputs(s, a, "u");
	if (rc == 0)
		rc = check_utf8_body(a, n, gen_pattern, &p);
	if (rc == 0)
		rc = release_pair(s, a);
	else
		release_pair(s, a);
	return rc;
}

static int check_record_batch_body(struct ArrowSchema *s, struct ArrowArray *a, const char *expected,
                                   int64_t length)
{
	const char *p = expected, *end, *colon;
	int64_t k, count = 0;
	struct ArrowSchema *cs;
	struct ArrowArray *ca;
	size_t nlen, flen;
	if (expected == NULL)
		return fail(50, "NULL expected list");
	if (*expected != '\0')
		for (count = 1, p = expected; *p; p++)
			count += *p == ',';
	if (s->n_children != count || a->n_children != count)
		return fail(51, "schema has %" PRId64 " children, array %" PRId64 ", want %" PRId64,
		            s->n_children, a->n_children, count);
	if (a->length != length)
		return fail(52, "length %" PRId64 ", want %" PRId64, a->length, length);
	if (a->offset < 0 || a->null_count != 0)
		return fail(53, "offset %" PRId64 ", null_count %" PRId64 ", want >= 0 and 0", a->offset,
		            a->null_count);
	if (count > 0 && (s->children == NULL || a->children == NULL))
		return fail(54, "NULL children pointer");
	for (k = 0, p = expected; k < count; k++, p = end + 1) {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		colon = memchr(p, ':', (size_t)(end - p));
		if (colon == NULL)
			return fail(55, "expected entry %" PRId64 " is not name:format", k);
		nlen = (size_t)(colon - p);
		flen = (size_t)(end - colon - 1);
		cs = s->children[k];
		ca = a->children[k];
		if (cs == NULL || ca == NULL || cs->release == NULL || ca->release == NULL)
			return fail(56, "child %" PRId64 " is NULL or released", k);
		if (cs->name == NULL || strlen(cs->name) != nlen || memcmp(cs->name, p, nlen) != 0)
			return fail(57, "child %" PRId64 " name \"%s\", want \"%.*s\"", k, cs->name ? cs->name : "(NULL)",
			            (int)nlen, p);
		if (cs->format == NULL || strlen(cs->format) != flen || memcmp(cs->format, colon + 1, flen) != 0)
			return fail(58, "child %" PRId64 " format \"%s\", want \"%.*s\"", k,
			            cs->format ? cs->format : "(NULL)", (int)flen, colon + 1);
		if (ca->length < a->offset + length)
			return fail(59, "child %" PRId64 " length %" PRId64 " < %" PRId64, k, ca->length,
			            a->offset + length);
		if (*end == '\0')
			break;
	}
	return 0;
}

/*
 * Checks a struct ("+s") pair: its length and, in order, each child's name
 * and format against expected, "name:format,name:format,..." (formats with
 * commas cannot be listed). Releases both.
 */
int ct_check_record_batch(struct ArrowSchema *s, struct ArrowArray *a, const char *expected, intptr_t length)
{
	int rc = check_inputs(s, a, "+s");
	if (rc == 0)
		rc = check_record_batch_body(s, a, expected, length);
	if (rc == 0)
		rc = release_pair(s, a);
	else
		release_pair(s, a);
	return rc;
}

/*
 * Moves child i of parent into out, releases parent, then sums out's int32
 * values (non-null rows) into *sum and releases out: children moved out of
 * a parent must outlive it.
 */
int ct_move_child_and_release(struct ArrowArray *parent, intptr_t i, struct ArrowArray *out, int64_t *sum)
{
	struct ArrowArray *child;
	const int32_t *v;
	int64_t k, total = 0;
	if (parent == NULL || out == NULL)
		return fail(70, "NULL parent or out");
	if (parent->release == NULL)
		return fail(71, "parent is released");
	if (i < 0 || i >= parent->n_children || parent->children == NULL || parent->children[i] == NULL) {
		release_pair(NULL, parent);
		return fail(72, "no child %" PRId64 " (n_children %" PRId64 ")", i, parent->n_children);
	}
	child = parent->children[i];
	if (child->release == NULL) {
		release_pair(NULL, parent);
		return fail(73, "child %" PRId64 " is released", i);
	}
	memcpy(out, child, sizeof *out);
	child->release = NULL;
	parent->release(parent);
	if (parent->release != NULL)
		return fail(74, "parent release did not set release to NULL");
	if (out->n_buffers != 2 || out->buffers == NULL || (out->length > 0 && out->buffers[1] == NULL)) {
		release_pair(NULL, out);
		return fail(75, "moved child is not an int32 array (n_buffers %" PRId64 ")", out->n_buffers);
	}
	v = out->buffers[1];
	for (k = 0; k < out->length; k++)
		if (valid_at(out, k))
			total += v[out->offset + k];
	if (sum != NULL)
		*sum = total;
	out->release(out);
	if (out->release != NULL)
		return fail(76, "moved child's release did not set release to NULL");
	return 0;
}

/* Checks a CPU device array holding ct_check_int32's data; releases both. */
int ct_check_device_array_cpu(struct ArrowSchema *s, struct ArrowDeviceArray *da, intptr_t n, int with_nulls)
{
	int rc = 0;
	if (da == NULL)
		rc = fail(90, "NULL device array");
	else if (da->device_type != ARROW_DEVICE_CPU)
		rc = fail(91, "device_type %" PRId32 ", want 1 (CPU)", da->device_type);
	else if (da->device_id != -1)
		rc = fail(92, "device_id %" PRId64 ", want -1", da->device_id);
	else if (da->sync_event != NULL)
		rc = fail(93, "sync_event %p, want NULL", da->sync_event);
	else if (da->reserved[0] != 0 || da->reserved[1] != 0 || da->reserved[2] != 0)
		rc = fail(94, "reserved bytes not zero");
	if (rc != 0) {
		release_pair(s, da != NULL ? &da->array : NULL);
		return rc;
	}
	return ct_check_int32(s, &da->array, n, with_nulls);
}

/* ---- malformed input ----------------------------------------------------- */

/* Every case fills both structs with working releases (or release NULL where
 * the case is "released"), so an importer can release what it rejects. */

#define MROWS 5

static void m_int32(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_int32(s, a, "x", ARROW_FLAG_NULLABLE, MROWS, 1, 0, 0);
}

static void m_released_schema(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	s->release(s);
}

static void m_released_array(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->release(a);
}

static void m_null_format(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	s->format = NULL;
}

static void m_format(struct ArrowSchema *s, struct ArrowArray *a, const char *format)
{
	m_int32(s, a);
	s->format = format; /* a literal; release frees the private copy */
}

static void m_empty_format(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, ""); }
static void m_decimal_no_params(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, "d:"); }
static void m_fixed_binary_bad_width(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, "w:abc"); }
static void m_fixed_binary_negative_width(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, "w:-4"); }
static void m_unknown_format(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, "Q"); }
static void m_timestamp_bad_unit(struct ArrowSchema *s, struct ArrowArray *a) { m_format(s, a, "tsx:"); }

static void m_union_duplicate_codes(struct ArrowSchema *s, struct ArrowArray *a)
{
	int8_t *types;
	int64_t i;
	schema_init(s, "+us:1,1", "u", ARROW_FLAG_NULLABLE, 2);
	fill_int32(schema_kid(s, 0), NULL, "a", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	fill_int32(schema_kid(s, 1), NULL, "b", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, MROWS, 0, 1, 2);
	types = array_buffer(a, 0, MROWS);
	for (i = 0; i < MROWS; i++)
		types[i] = 1;
	fill_int32(NULL, array_kid(a, 0), NULL, 0, MROWS, 1, 0, 0);
	fill_int32(NULL, array_kid(a, 1), NULL, 0, MROWS, 1, 0, 0);
}

static void m_union_code_out_of_range(struct ArrowSchema *s, struct ArrowArray *a)
{
	schema_init(s, "+ud:200", "u", ARROW_FLAG_NULLABLE, 1);
	fill_int32(schema_kid(s, 0), NULL, "a", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, 1, 0, 2, 1);
	*(int8_t *)array_buffer(a, 0, 1) = (int8_t)-56; /* 200 as int8 */
	array_buffer(a, 1, 4);
	fill_int32(NULL, array_kid(a, 0), NULL, 0, 1, 1, 0, 0);
}

static void m_negative_length(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->length = -1;
}

static void m_negative_offset(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->offset = -1;
}

static void m_null_count_minus_two(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->null_count = -2;
}

static void m_int32_one_buffer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->n_buffers = 1;
}

static void m_int32_three_buffers(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_int32(s, NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, MROWS, 0, 3, 0); /* the pointer array really has 3 slots */
	array_buffer(a, 1, MROWS * 4);
	array_buffer(a, 2, MROWS * 4);
}

static void m_null_buffers_pointer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->buffers = NULL;
}

static void m_null_data_buffer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->buffers[1] = NULL;
}

/* list<int32> schema and array with k children each (a list needs exactly 1). */
static void m_list_children(struct ArrowSchema *s, struct ArrowArray *a, int64_t k)
{
	int64_t i;
	schema_init(s, "+l", "l", ARROW_FLAG_NULLABLE, k);
	for (i = 0; i < k; i++)
		fill_int32(schema_kid(s, i), NULL, "item", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, 3, 0, 2, k);
	array_buffer(a, 1, 4 * 4); /* offsets all 0 */
	for (i = 0; i < k; i++)
		fill_int32(NULL, array_kid(a, i), NULL, 0, 0, 1, 0, 0);
}

static void m_list_zero_children(struct ArrowSchema *s, struct ArrowArray *a) { m_list_children(s, a, 0); }
static void m_list_two_children(struct ArrowSchema *s, struct ArrowArray *a) { m_list_children(s, a, 2); }

/* struct<x: int32> with parent length/offset and child length given. */
static void m_struct1(struct ArrowSchema *s, struct ArrowArray *a, int64_t length, int64_t offset,
                      int64_t child_length)
{
	schema_init(s, "+s", "st", ARROW_FLAG_NULLABLE, 1);
	fill_int32(schema_kid(s, 0), NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, length, 0, 1, 1);
	a->offset = offset;
	fill_int32(NULL, array_kid(a, 0), NULL, 0, child_length, 1, 0, 0);
}

static void m_null_children_pointer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	a->children = NULL;
}

static void m_null_child_pointer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	a->children[0] = NULL; /* the private kids list still owns the child */
}

static void m_released_child(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	a->children[0]->release(a->children[0]);
}

static void m_struct_child_too_short(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, 10, 0, 5);
}

static void m_struct_child_shorter_than_offset_plus_length(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, 5, 3, 6);
}

static void m_struct_n_children_mismatch(struct ArrowSchema *s, struct ArrowArray *a)
{
	schema_init(s, "+s", "st", ARROW_FLAG_NULLABLE, 2);
	fill_int32(schema_kid(s, 0), NULL, "x", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	fill_int32(schema_kid(s, 1), NULL, "y", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, MROWS, 0, 1, 1);
	fill_int32(NULL, array_kid(a, 0), NULL, 0, MROWS, 1, 0, 0);
}

static void m_schema_negative_n_children(struct ArrowSchema *s, struct ArrowArray *a)
{
	schema_init(s, "+s", "st", ARROW_FLAG_NULLABLE, 0);
	s->n_children = -1;
	array_init(a, MROWS, 0, 1, 0);
}

static void m_schema_null_children_pointer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	s->children = NULL;
}

static void m_schema_null_child_pointer(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	s->children[0] = NULL;
}

static void m_released_schema_child(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_struct1(s, a, MROWS, 0, MROWS);
	s->children[0]->release(s->children[0]);
}

/* list<int64> of 3 rows over a child of child_len values, with the given offsets. */
static void m_list_offsets(struct ArrowSchema *s, struct ArrowArray *a, const int32_t *offsets, int64_t child_len)
{
	fill_list_int64(s, NULL, "l", ARROW_FLAG_NULLABLE, 0);
	array_init(a, 3, 0, 2, 1);
	memcpy(array_buffer(a, 1, 4 * 4), offsets, 4 * 4);
	array_init(array_kid(a, 0), child_len, 0, 2, 0);
	array_buffer(array_kid(a, 0), 1, (size_t)child_len * 8);
}

static void m_list_offsets_beyond_child(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t offsets[] = {0, 2, 4, 20};
	m_list_offsets(s, a, offsets, 10);
}

static void m_list_null_offsets_buffer(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t offsets[] = {0, 1, 2, 3};
	m_list_offsets(s, a, offsets, 3);
	a->buffers[1] = NULL;
}

/* utf8 of 3 rows with the given offsets over 8 bytes of data. */
static void m_utf8_offsets(struct ArrowSchema *s, struct ArrowArray *a, const int32_t *offsets)
{
	schema_init(s, "u", "u", ARROW_FLAG_NULLABLE, 0);
	array_init(a, 3, 0, 3, 0);
	memcpy(array_buffer(a, 1, 4 * 4), offsets, 4 * 4);
	memcpy(array_buffer(a, 2, 8), "abcdefgh", 8);
}

static void m_utf8_decreasing_offsets(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t offsets[] = {0, 3, 1, 4};
	m_utf8_offsets(s, a, offsets);
}

static void m_utf8_negative_first_offset(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t offsets[] = {-1, 2, 4, 6};
	m_utf8_offsets(s, a, offsets);
}

static void m_dictionary_missing_in_array(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_dict_utf8(s, a, "d", ARROW_FLAG_NULLABLE, MROWS);
	a->dictionary = NULL; /* the private copy still owns it */
}

static void m_dictionary_unexpected_in_array(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const char *const vals[] = {"x", "y"};
	m_int32(s, a);
	fill_utf8(NULL, array_add_dictionary(a), NULL, 0, 2, gen_list, vals);
}

static void m_dictionary_index_not_integer(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const char *const vals[] = {"x", "y"};
	fill_utf8(s, a, "d", ARROW_FLAG_NULLABLE, 2, gen_list, vals);
	fill_utf8(schema_add_dictionary(s), NULL, NULL, 0, 0, gen_list, vals);
	fill_utf8(NULL, array_add_dictionary(a), NULL, 0, 2, gen_list, vals);
}

static void m_dictionary_index_out_of_range(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_dict_utf8(s, a, "d", ARROW_FLAG_NULLABLE, MROWS);
	((int16_t *)a->buffers[1])[1] = 7; /* the dictionary has 3 values */
}

static void m_metadata(struct ArrowSchema *s, struct ArrowArray *a, const int32_t *words, size_t nwords)
{
	m_int32(s, a);
	schema_raw_metadata(s, words, nwords * 4);
}

static void m_metadata_negative_pair_count(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t blob[] = {-1, 0, 0, 0};
	m_metadata(s, a, blob, 4);
}

static void m_metadata_negative_key_length(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t blob[] = {1, -5, 0, 0, 0};
	m_metadata(s, a, blob, 5);
}

static void m_metadata_negative_value_length(struct ArrowSchema *s, struct ArrowArray *a)
{
	/* one pair: key "kkkk" (4 bytes), value length -1 */
	int32_t blob[4] = {1, 4, 0, -1};
	memcpy(&blob[2], "kkkk", 4);
	m_metadata(s, a, blob, 4);
}

static void m_fixed_size_list(struct ArrowSchema *s, struct ArrowArray *a, const char *format, int64_t child_len)
{
	schema_init(s, format, "fsl", ARROW_FLAG_NULLABLE, 1);
	fill_int32(schema_kid(s, 0), NULL, "item", ARROW_FLAG_NULLABLE, 0, 0, 0, 0);
	array_init(a, 4, 0, 1, 1);
	fill_int32(NULL, array_kid(a, 0), NULL, 0, child_len, 1, 0, 0);
}

static void m_fixed_size_list_child_too_short(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_fixed_size_list(s, a, "+w:3", 10); /* 4 rows of 3 need 12 */
}

static void m_fixed_size_list_negative_size(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_fixed_size_list(s, a, "+w:-1", 10);
}

static void m_string_view_missing_sizes_buffer(struct ArrowSchema *s, struct ArrowArray *a)
{
	int32_t len = 2;
	schema_init(s, "vu", "v", ARROW_FLAG_NULLABLE, 0);
	array_init(a, 1, 0, 2, 0); /* validity and views only: at least 3 are required */
	memcpy(array_buffer(a, 1, 16), &len, 4);
	memcpy((char *)a->buffers[1] + 4, "ok", 2);
}

static void m_sparse_union_child_too_short(struct ArrowSchema *s, struct ArrowArray *a)
{
	struct strpat p = {"u", 1, 0, 0, 0};
	fill_union(s, a, "u", ARROW_FLAG_NULLABLE, 6, 0);
	/* swap the utf8 child for a shorter one */
	array_kid(a, 1)->release(array_kid(a, 1));
	fill_utf8(NULL, array_kid(a, 1), NULL, 0, 3, gen_pattern, &p);
}

static void m_dense_union_offset_out_of_range(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_union(s, a, "u", ARROW_FLAG_NULLABLE, 4, 1);
	((int32_t *)a->buffers[1])[3] = 9; /* the utf8 child has 2 values */
}

static void m_union_type_id_not_declared(struct ArrowSchema *s, struct ArrowArray *a)
{
	fill_union(s, a, "u", ARROW_FLAG_NULLABLE, 4, 0);
	((int8_t *)a->buffers[0])[2] = 9; /* codes are 5 and 7 */
}

/* REE<?, float64> with the given run ends (format ends_format, int32 data). */
static void m_ree(struct ArrowSchema *s, struct ArrowArray *a, const char *ends_format, const int32_t *ends,
                  int64_t runs, int64_t length)
{
	struct ArrowArray *va;
	schema_init(s, "+r", "ree", ARROW_FLAG_NULLABLE, 2);
	schema_init(schema_kid(s, 0), ends_format, "run_ends", 0, 0);
	schema_init(schema_kid(s, 1), "g", "values", ARROW_FLAG_NULLABLE, 0);
	array_init(a, length, 0, 0, 2);
	array_init(array_kid(a, 0), runs, 0, 2, 0);
	memcpy(array_buffer(array_kid(a, 0), 1, (size_t)runs * 8), ends, (size_t)runs * 4);
	va = array_kid(a, 1);
	array_init(va, runs, 0, 2, 0);
	array_buffer(va, 1, (size_t)runs * 8);
}

static void m_ree_run_ends_not_int(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t ends[] = {2, 4, 5};
	m_ree(s, a, "g", ends, 3, 5);
}

static void m_ree_run_ends_not_increasing(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t ends[] = {3, 2, 5};
	m_ree(s, a, "i", ends, 3, 5);
}

static void m_ree_length_beyond_last_run_end(struct ArrowSchema *s, struct ArrowArray *a)
{
	static const int32_t ends[] = {2, 4, 6};
	m_ree(s, a, "i", ends, 3, 10);
}

static void m_length_plus_offset_overflow(struct ArrowSchema *s, struct ArrowArray *a)
{
	m_int32(s, a);
	a->length = INT64_MAX - 1;
	a->offset = 10;
}

struct malformed_case {
	const char *name;
	void (*make)(struct ArrowSchema *, struct ArrowArray *);
};

static const struct malformed_case malformed_cases[] = {
	{"released_schema", m_released_schema},
	{"released_array", m_released_array},
	{"null_format", m_null_format},
	{"empty_format", m_empty_format},
	{"decimal_no_params", m_decimal_no_params},
	{"fixed_binary_bad_width", m_fixed_binary_bad_width},
	{"fixed_binary_negative_width", m_fixed_binary_negative_width},
	{"unknown_format", m_unknown_format},
	{"timestamp_bad_unit", m_timestamp_bad_unit},
	{"union_duplicate_codes", m_union_duplicate_codes},
	{"union_code_out_of_range", m_union_code_out_of_range},
	{"negative_length", m_negative_length},
	{"negative_offset", m_negative_offset},
	{"null_count_minus_two", m_null_count_minus_two},
	{"int32_one_buffer", m_int32_one_buffer},
	{"int32_three_buffers", m_int32_three_buffers},
	{"null_buffers_pointer", m_null_buffers_pointer},
	{"null_data_buffer", m_null_data_buffer},
	{"list_zero_children", m_list_zero_children},
	{"list_two_children", m_list_two_children},
	{"null_children_pointer", m_null_children_pointer},
	{"null_child_pointer", m_null_child_pointer},
	{"released_child", m_released_child},
	{"struct_child_too_short", m_struct_child_too_short},
	{"struct_child_shorter_than_offset_plus_length", m_struct_child_shorter_than_offset_plus_length},
	{"struct_n_children_mismatch", m_struct_n_children_mismatch},
	{"schema_negative_n_children", m_schema_negative_n_children},
	{"schema_null_children_pointer", m_schema_null_children_pointer},
	{"schema_null_child_pointer", m_schema_null_child_pointer},
	{"released_schema_child", m_released_schema_child},
	{"list_offsets_beyond_child", m_list_offsets_beyond_child},
	{"list_null_offsets_buffer", m_list_null_offsets_buffer},
	{"utf8_decreasing_offsets", m_utf8_decreasing_offsets},
	{"utf8_negative_first_offset", m_utf8_negative_first_offset},
	{"dictionary_missing_in_array", m_dictionary_missing_in_array},
	{"dictionary_unexpected_in_array", m_dictionary_unexpected_in_array},
	{"dictionary_index_not_integer", m_dictionary_index_not_integer},
	{"dictionary_index_out_of_range", m_dictionary_index_out_of_range},
	{"metadata_negative_pair_count", m_metadata_negative_pair_count},
	{"metadata_negative_key_length", m_metadata_negative_key_length},
	{"metadata_negative_value_length", m_metadata_negative_value_length},
	{"fixed_size_list_child_too_short", m_fixed_size_list_child_too_short},
	{"fixed_size_list_negative_size", m_fixed_size_list_negative_size},
	{"string_view_missing_sizes_buffer", m_string_view_missing_sizes_buffer},
	{"sparse_union_child_too_short", m_sparse_union_child_too_short},
	{"dense_union_offset_out_of_range", m_dense_union_offset_out_of_range},
	{"union_type_id_not_declared", m_union_type_id_not_declared},
	{"ree_run_ends_not_int", m_ree_run_ends_not_int},
	{"ree_run_ends_not_increasing", m_ree_run_ends_not_increasing},
	{"ree_length_beyond_last_run_end", m_ree_length_beyond_last_run_end},
	{"length_plus_offset_overflow", m_length_plus_offset_overflow},
};

#define N_MALFORMED ((int)(sizeof malformed_cases / sizeof malformed_cases[0]))

int ct_malformed_count(void) { return N_MALFORMED; }

/* The case's name, or NULL for an unknown id. */
const char *ct_malformed_name(int case_id)
{
	if (case_id < 0 || case_id >= N_MALFORMED)
		return NULL;
	return malformed_cases[case_id].name;
}

/* Fills s and a with malformed case case_id; -1 for an unknown id. */
int ct_make_malformed(int case_id, struct ArrowSchema *s, struct ArrowArray *a)
{
	if (case_id < 0 || case_id >= N_MALFORMED || s == NULL || a == NULL)
		return -1;
	malformed_cases[case_id].make(s, a);
	return 0;
}
