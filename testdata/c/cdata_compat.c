/*
 * The C side of the cdata compatibility scenarios (internal/cdatatest): the
 * cases arrow-go's own arrow/cdata test suite checks, played against any
 * implementation of arrow-go's cdata API.
 *
 * Producers build schemas, arrays and streams node by node for the Go side,
 * which describes the tree it wants (a format string, a name, flags, buffer
 * contents) and may then overwrite header fields to make a producer lie.
 * Every node belongs to a token: the token counts the producer's live
 * allocations and the release callbacks that ran, so a test can check that an
 * importer released a tree exactly once and that nothing of it is left. A
 * release frees what the producer allocated (remembered in private_data),
 * never what the header says, so a header the test overwrote cannot make the
 * release itself crash.
 *
 * Consumers walk an ArrowArrayStream the Go side exported and release
 * everything it hands them, one of them with fake Go heap pointers left in
 * the output structs.
 *
 * Integers cross the Go boundary as int or intptr_t, never int64_t by value
 * (one pointer-sized slot per argument on every target).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_abi.h"

/* ---- tokens and allocation --------------------------------------------- */

struct cc_token {
	int64_t live;     /* allocations not yet freed */
	int64_t releases; /* release callbacks that ran their body */
};

void cc_free(void *p) { free(p); }

struct cc_token *cc_token_new(void) { return calloc(1, sizeof(struct cc_token)); }

intptr_t cc_token_live(struct cc_token *t) { return (intptr_t)__atomic_load_n(&t->live, __ATOMIC_SEQ_CST); }

intptr_t cc_token_releases(struct cc_token *t)
{
	return (intptr_t)__atomic_load_n(&t->releases, __ATOMIC_SEQ_CST);
}

static void *tok_alloc(struct cc_token *t, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (p == NULL)
		abort();
	__atomic_add_fetch(&t->live, 1, __ATOMIC_SEQ_CST);
	return p;
}

static void tok_free(struct cc_token *t, void *p)
{
	if (p == NULL)
		return;
	free(p);
	__atomic_sub_fetch(&t->live, 1, __ATOMIC_SEQ_CST);
}

static char *tok_strdup(struct cc_token *t, const char *s)
{
	size_t n = strlen(s);
	char *p = tok_alloc(t, n + 1);
	memcpy(p, s, n);
	return p;
}

static void count_release(struct cc_token *t) { __atomic_add_fetch(&t->releases, 1, __ATOMIC_SEQ_CST); }

/* cc_token_free_struct frees a root struct that cc_schema_new or
 * cc_array_new allocated (a release frees only the children). */
void cc_token_free_struct(struct cc_token *t, void *p) { tok_free(t, p); }

/* ---- schemas ----------------------------------------------------------- */

#define CC_MAX_CHILDREN 8

struct schema_priv {
	struct cc_token *tok;
	char *format, *name, *metadata;
	int64_t n_children;
	struct ArrowSchema **children; /* what the header had, kept for release */
	struct ArrowSchema *dictionary;
};

static void schema_release(struct ArrowSchema *s)
{
	struct schema_priv *p = s->private_data;
	struct cc_token *t = p->tok;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowSchema *c = p->children[i];
		if (c->release != NULL)
			c->release(c);
		tok_free(t, c);
	}
	if (p->dictionary != NULL) {
		if (p->dictionary->release != NULL)
			p->dictionary->release(p->dictionary);
		tok_free(t, p->dictionary);
	}
	tok_free(t, p->children);
	tok_free(t, p->format);
	tok_free(t, p->name);
	tok_free(t, p->metadata);
	tok_free(t, p);
	s->release = NULL;
	s->private_data = NULL;
	count_release(t);
}

/* cc_schema_new returns a schema node in memory of the token's. */
struct ArrowSchema *cc_schema_new(struct cc_token *t, const char *format, const char *name, int flags)
{
	struct ArrowSchema *s = tok_alloc(t, sizeof *s);
	struct schema_priv *p = tok_alloc(t, sizeof *p);
	p->tok = t;
	p->format = tok_strdup(t, format);
	p->name = tok_strdup(t, name);
	p->children = tok_alloc(t, CC_MAX_CHILDREN * sizeof *p->children);
	s->format = p->format;
	s->name = p->name;
	s->flags = flags;
	s->release = schema_release;
	s->private_data = p;
	return s;
}

/* cc_schema_add_child makes child (from cc_schema_new, same token) the next
 * child of parent, which owns it from then on. */
int cc_schema_add_child(struct ArrowSchema *parent, struct ArrowSchema *child)
{
	struct schema_priv *p = parent->private_data;
	if (p->n_children == CC_MAX_CHILDREN)
		return EINVAL;
	p->children[p->n_children++] = child;
	parent->children = p->children;
	parent->n_children = p->n_children;
	return 0;
}

int cc_schema_set_dictionary(struct ArrowSchema *parent, struct ArrowSchema *dict)
{
	struct schema_priv *p = parent->private_data;
	p->dictionary = dict;
	parent->dictionary = dict;
	return 0;
}

static void put_i32(char *b, int32_t v) { memcpy(b, &v, 4); }

/* cc_schema_set_metadata gives s one of two fixed metadata maps in the
 * C Data Interface's native-endian encoding:
 *   1: key1 = "", key2 = "bar"
 *   2: key = "abcde" */
int cc_schema_set_metadata(struct ArrowSchema *s, int which)
{
	static const char *keys1[] = {"key1", "key2"}, *vals1[] = {"", "bar"};
	static const char *keys2[] = {"key"}, *vals2[] = {"abcde"};
	const char **keys, **vals;
	int n;
	switch (which) {
	case 1:
		keys = keys1, vals = vals1, n = 2;
		break;
	case 2:
		keys = keys2, vals = vals2, n = 1;
		break;
	default:
		return EINVAL;
	}
	size_t size = 4;
	for (int i = 0; i < n; i++)
		size += 8 + strlen(keys[i]) + strlen(vals[i]);
	struct schema_priv *p = s->private_data;
	char *b = tok_alloc(p->tok, size), *w = b;
	put_i32(w, n), w += 4;
	for (int i = 0; i < n; i++) {
		int32_t kl = (int32_t)strlen(keys[i]), vl = (int32_t)strlen(vals[i]);
		put_i32(w, kl), w += 4;
		memcpy(w, keys[i], (size_t)kl), w += kl;
		put_i32(w, vl), w += 4;
		memcpy(w, vals[i], (size_t)vl), w += vl;
	}
	tok_free(p->tok, p->metadata);
	p->metadata = b;
	s->metadata = b;
	return 0;
}

/* ---- arrays ------------------------------------------------------------ */

struct array_priv {
	struct cc_token *tok;
	int64_t n_buffers;
	void **owned;        /* buffers this producer allocated, by index */
	const void **header; /* the buffers array the header pointed at */
	int64_t n_children;
	struct ArrowArray **children;
	struct ArrowArray *dictionary;
};

static void array_release(struct ArrowArray *a)
{
	struct array_priv *p = a->private_data;
	struct cc_token *t = p->tok;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowArray *c = p->children[i];
		if (c->release != NULL)
			c->release(c);
		tok_free(t, c);
	}
	if (p->dictionary != NULL) {
		if (p->dictionary->release != NULL)
			p->dictionary->release(p->dictionary);
		tok_free(t, p->dictionary);
	}
	for (int64_t i = 0; i < p->n_buffers; i++)
		tok_free(t, p->owned[i]);
	tok_free(t, p->owned);
	tok_free(t, p->header);
	tok_free(t, p->children);
	tok_free(t, p);
	a->release = NULL;
	a->private_data = NULL;
	count_release(t);
}

/* cc_array_new returns an array node with n_buffers null buffers. */
struct ArrowArray *cc_array_new(struct cc_token *t, intptr_t length, intptr_t null_count, intptr_t offset,
				int n_buffers)
{
	struct ArrowArray *a = tok_alloc(t, sizeof *a);
	struct array_priv *p = tok_alloc(t, sizeof *p);
	p->tok = t;
	p->n_buffers = n_buffers;
	p->owned = tok_alloc(t, (size_t)n_buffers * sizeof *p->owned);
	p->header = tok_alloc(t, (size_t)n_buffers * sizeof *p->header);
	p->children = tok_alloc(t, CC_MAX_CHILDREN * sizeof *p->children);
	a->length = length;
	a->null_count = null_count;
	a->offset = offset;
	a->n_buffers = n_buffers;
	a->buffers = n_buffers > 0 ? p->header : NULL;
	a->release = array_release;
	a->private_data = p;
	return a;
}

/* cc_array_buffer allocates buffer i (zeroed, size bytes) and returns it for
 * the caller to fill; size 0 leaves the buffer null. */
void *cc_array_buffer(struct ArrowArray *a, int i, intptr_t size)
{
	struct array_priv *p = a->private_data;
	if (i < 0 || i >= p->n_buffers || size <= 0)
		return NULL;
	tok_free(p->tok, p->owned[i]);
	p->owned[i] = tok_alloc(p->tok, (size_t)size);
	p->header[i] = p->owned[i];
	return p->owned[i];
}

/* cc_array_set_buffer_address puts an address this producer does not own
 * (never dereferenced by a correct consumer) into buffer i. */
int cc_array_set_buffer_address(struct ArrowArray *a, int i, intptr_t addr)
{
	struct array_priv *p = a->private_data;
	if (i < 0 || i >= p->n_buffers)
		return EINVAL;
	p->header[i] = (const void *)addr;
	return 0;
}

int cc_array_add_child(struct ArrowArray *parent, struct ArrowArray *child)
{
	struct array_priv *p = parent->private_data;
	if (p->n_children == CC_MAX_CHILDREN)
		return EINVAL;
	p->children[p->n_children++] = child;
	parent->children = p->children;
	parent->n_children = p->n_children;
	return 0;
}

int cc_array_set_dictionary(struct ArrowArray *parent, struct ArrowArray *dict)
{
	struct array_priv *p = parent->private_data;
	p->dictionary = dict;
	parent->dictionary = dict;
	return 0;
}

/* cc_int32_array returns an int32 array 1, 2, …, n without a validity
 * bitmap, built entirely here. */
struct ArrowArray *cc_int32_array(struct cc_token *t, int n)
{
	struct ArrowArray *a = cc_array_new(t, n, 0, 0, 2);
	int32_t *v = cc_array_buffer(a, 1, (intptr_t)n * 4);
	for (int i = 0; i < n; i++)
		v[i] = i + 1;
	return a;
}

/* cc_string_all_nulls returns a utf8 array of n nulls: a zeroed bitmap,
 * zero offsets and an empty data buffer at a dangling non-null address. */
struct ArrowArray *cc_string_all_nulls(struct cc_token *t, int n)
{
	struct ArrowArray *a = cc_array_new(t, n, n, 0, 3);
	cc_array_buffer(a, 0, (n + 7) / 8);
	cc_array_buffer(a, 1, ((intptr_t)n + 1) * 4);
	cc_array_set_buffer_address(a, 2, 1);
	return a;
}

/* ---- releasing from C --------------------------------------------------- */

void cc_release_schema(struct ArrowSchema *s)
{
	if (s->release != NULL)
		s->release(s);
}

void cc_release_array(struct ArrowArray *a)
{
	if (a->release != NULL)
		a->release(a);
}

void cc_release_stream(struct ArrowArrayStream *s)
{
	if (s->release != NULL)
		s->release(s);
}

/* ---- a stream producer -------------------------------------------------- */

/* Batch k (from 1) of the stream has two columns and three rows:
 * a int32 = k, 2k, 3k and b utf8 = "foo", "bar", "baz". */
struct stream_priv {
	struct cc_token *tok;
	int n, max;
};

static int stream_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	struct stream_priv *p = st->private_data;
	struct ArrowSchema *s = cc_schema_new(p->tok, "+s", "", 0);
	cc_schema_add_child(s, cc_schema_new(p->tok, "i", "a", ARROW_FLAG_NULLABLE));
	cc_schema_add_child(s, cc_schema_new(p->tok, "u", "b", ARROW_FLAG_NULLABLE));
	*out = *s; /* move the root into the caller's struct */
	tok_free(p->tok, s);
	return 0;
}

static int stream_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	struct stream_priv *p = st->private_data;
	if (p->n == p->max) {
		memset(out, 0, sizeof *out);
		return 0;
	}
	int k = ++p->n;
	struct ArrowArray *a = cc_array_new(p->tok, 3, 0, 0, 1);
	struct ArrowArray *ints = cc_array_new(p->tok, 3, 0, 0, 2);
	int32_t *v = cc_array_buffer(ints, 1, 12);
	for (int i = 0; i < 3; i++)
		v[i] = k * (i + 1);
	struct ArrowArray *strs = cc_array_new(p->tok, 3, 0, 0, 3);
	int32_t *off = cc_array_buffer(strs, 1, 16);
	off[0] = 0, off[1] = 3, off[2] = 6, off[3] = 9;
	memcpy(cc_array_buffer(strs, 2, 9), "foobarbaz", 9);
	cc_array_add_child(a, ints);
	cc_array_add_child(a, strs);
	*out = *a;
	tok_free(p->tok, a);
	return 0;
}

static const char *stream_get_last_error(struct ArrowArrayStream *st)
{
	(void)st;
	return NULL;
}

static void stream_release(struct ArrowArrayStream *st)
{
	struct stream_priv *p = st->private_data;
	struct cc_token *t = p->tok;
	tok_free(t, p);
	memset(st, 0, sizeof *st);
	count_release(t);
}

/* cc_stream_batches fills st with a stream of n batches (see above). */
void cc_stream_batches(struct ArrowArrayStream *st, struct cc_token *t, int n)
{
	struct stream_priv *p = tok_alloc(t, sizeof *p);
	p->tok = t;
	p->max = n;
	st->get_schema = stream_get_schema;
	st->get_next = stream_get_next;
	st->get_last_error = stream_get_last_error;
	st->release = stream_release;
	st->private_data = p;
}

/* A stream whose every call fails with EINVAL and the message below. */
static int failing_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	(void)st, (void)out;
	return EINVAL;
}

static int failing_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	(void)st, (void)out;
	return EINVAL;
}

static const char *failing_get_last_error(struct ArrowArrayStream *st)
{
	(void)st;
	return "Expected error message";
}

static void failing_release(struct ArrowArrayStream *st)
{
	struct cc_token *t = st->private_data;
	memset(st, 0, sizeof *st);
	count_release(t);
}

void cc_stream_failing(struct ArrowArrayStream *st, struct cc_token *t)
{
	st->get_schema = failing_get_schema;
	st->get_next = failing_get_next;
	st->get_last_error = failing_get_last_error;
	st->release = failing_release;
	st->private_data = t;
}

/* ---- consumers of an exported stream ------------------------------------ */

/* next_rand: rand_r's classic generator, which Windows' C runtime lacks. */
static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

/* fake returns what looks like a Go heap address on 64-bit targets. */
static void *fake(unsigned *seed)
{
	uintptr_t base = 0;
#if UINTPTR_MAX > 0xffffffffu
	base = (uintptr_t)0xc000000000ull;
#endif
	return (void *)(base + (uintptr_t)(next_rand(seed) % 0x2000));
}

/* consume reads the whole stream: the schema (checked to be a struct), then
 * every batch, each released at once, and releases the stream. The output
 * structs start out as garbage: a release pointer that must not be called,
 * or (confuse) fake Go pointers. It returns the number of batches, or minus
 * the producer's error code (or -1000 for a broken stream). */
static intptr_t consume(struct ArrowArrayStream *st, int confuse, unsigned seed)
{
	struct ArrowSchema schema;
	memset(&schema, 0, sizeof schema);
	if (confuse) {
		schema.name = fake(&seed);
		schema.format = fake(&seed);
	}
	int rc = st->get_schema(st, &schema);
	if (rc != 0)
		return -rc;
	if (schema.release == NULL || schema.format == NULL || strcmp(schema.format, "+s") != 0)
		return -1000;
	schema.release(&schema);
	if (schema.release != NULL)
		return -1000;
	intptr_t batches = 0;
	for (;;) {
		struct ArrowArray array;
		memset(&array, 0, sizeof array);
		if (confuse) {
			array.release = fake(&seed);
			array.private_data = fake(&seed);
		} else {
			array.release = (void (*)(struct ArrowArray *))(uintptr_t)0xDEADBEEF;
		}
		rc = st->get_next(st, &array);
		if (rc != 0)
			return -rc;
		if (array.release == NULL)
			break;
		batches++;
		array.release(&array);
		if (array.release != NULL)
			return -1000;
	}
	st->release(st);
	if (st->release != NULL)
		return -1000;
	return batches;
}

intptr_t cc_consume_stream(struct ArrowArrayStream *st) { return consume(st, 0, 0); }

intptr_t cc_consume_stream_confusing(struct ArrowArrayStream *st, int seed) { return consume(st, 1, (unsigned)seed); }
