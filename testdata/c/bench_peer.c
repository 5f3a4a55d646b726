/*
 * The C side of the C-path benchmarks (bench_cpath_test.go,
 * stream/bench_cpath_test.go, driven through internal/benchpeer): a plain C
 * producer and consumer that knows nothing of cdevice or arrow-go, so that no
 * importer or exporter can recognise its structs.
 *
 * Producer. bp_template_new deep-copies the struct trees of one exported
 * batch (ArrowArray and ArrowSchema), keeping the buffer pointers and the
 * format, name and metadata pointers: the export that made them must stay
 * alive as long as the template. A clone (bp_clone_array, bp_clone_schema)
 * is a fresh struct tree in one malloc'd block (every node, its buffers and
 * children pointer arrays), made by copying the template's block and
 * relocating its internal pointers; the buffers are the template's. Every
 * node of a clone has its own release, which releases its unreleased
 * children and dictionary, marks the node released and frees the block when
 * the block's last node goes, so a consumer may move children out and release
 * them later. bp_stream_new makes an ArrowArrayStream whose get_schema hands
 * out a schema clone and whose get_next hands out `batches` array clones,
 * then the end of the stream.
 *
 * Consumer. bp_walk_release reads every node of an exported batch (lengths,
 * counts, every buffer pointer, format and name strings, children and
 * dictionaries), then releases the array and the schema; bp_walk_template
 * reads a template the same way, to measure the walk alone.
 *
 * Counters (bp_counter) let the Go side check that every clone was released
 * exactly once. Integers cross the Go boundary as intptr_t, never int64_t by
 * value (one pointer-sized slot per argument on every target).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_abi.h"

/* ---- counters ------------------------------------------------------------ */

enum {
	BP_BLOCKS,          /* clones made (array or schema trees) */
	BP_BLOCKS_FREED,    /* clones whose last node was released */
	BP_NODES,           /* nodes of the clones made */
	BP_NODES_RELEASED,  /* node releases that ran their body */
	BP_DOUBLES,         /* releases called on a node already released */
	BP_STREAMS,         /* streams made */
	BP_STREAMS_RELEASED,/* streams released */
	BP_WALK_ARRAYS,     /* array nodes the last bp_walk_release read */
	BP_WALK_SCHEMAS,    /* schema nodes the last bp_walk_release read */
	BP_NCOUNTERS
};

static intptr_t bp_counters[BP_NCOUNTERS];

static void bp_add(int c, intptr_t n)
{
	__atomic_add_fetch(&bp_counters[c], n, __ATOMIC_RELAXED);
}

/* bp_counter returns counter c (the enum above), or -1 for an unknown c. */
intptr_t bp_counter(intptr_t c)
{
	if (c < 0 || c >= BP_NCOUNTERS)
		return -1;
	return __atomic_load_n(&bp_counters[c], __ATOMIC_SEQ_CST);
}

/* ---- blocks -------------------------------------------------------------- */

/* A block: this header, the nodes (the root first), then the pointer area
 * (buffers and children arrays). private_data of every node is the block. */
struct bp_block {
	intptr_t live; /* nodes of a clone not yet released */
	intptr_t pad[16 / sizeof(intptr_t) - 1]; /* nodes start 16 bytes in */
};

#define BP_HDR sizeof(struct bp_block)

#define BP_RELOC(p, d) ((void *)((uintptr_t)(p) + (d)))

/* The block freed when its last node is released. */
static void bp_node_gone(struct bp_block *blk)
{
	bp_add(BP_NODES_RELEASED, 1);
	if (__atomic_sub_fetch(&blk->live, 1, __ATOMIC_ACQ_REL) == 0) {
		free(blk);
		bp_add(BP_BLOCKS_FREED, 1);
	}
}

static void bp_array_release(struct ArrowArray *a)
{
	int64_t i;

	if (a->release == NULL) {
		bp_add(BP_DOUBLES, 1);
		return;
	}
	for (i = 0; i < a->n_children; i++)
		if (a->children[i]->release)
			a->children[i]->release(a->children[i]);
	if (a->dictionary && a->dictionary->release)
		a->dictionary->release(a->dictionary);
	a->release = NULL;
	bp_node_gone(a->private_data);
}

static void bp_schema_release(struct ArrowSchema *s)
{
	int64_t i;

	if (s->release == NULL) {
		bp_add(BP_DOUBLES, 1);
		return;
	}
	for (i = 0; i < s->n_children; i++)
		if (s->children[i]->release)
			s->children[i]->release(s->children[i]);
	if (s->dictionary && s->dictionary->release)
		s->dictionary->release(s->dictionary);
	s->release = NULL;
	bp_node_gone(s->private_data);
}

/* ---- templates ----------------------------------------------------------- */

/* One tree of a template: a block laid out as its clones are. */
struct bp_tree {
	char *block;
	size_t size;
	intptr_t nodes;
};

struct bp_template {
	struct bp_tree array, schema;
};

static void bp_count_array(const struct ArrowArray *a, intptr_t *nodes, intptr_t *ptrs)
{
	int64_t i;

	(*nodes)++;
	*ptrs += a->n_buffers + a->n_children;
	for (i = 0; i < a->n_children; i++)
		bp_count_array(a->children[i], nodes, ptrs);
	if (a->dictionary)
		bp_count_array(a->dictionary, nodes, ptrs);
}

static void bp_count_schema(const struct ArrowSchema *s, intptr_t *nodes, intptr_t *ptrs)
{
	int64_t i;

	(*nodes)++;
	*ptrs += s->n_children;
	for (i = 0; i < s->n_children; i++)
		bp_count_schema(s->children[i], nodes, ptrs);
	if (s->dictionary)
		bp_count_schema(s->dictionary, nodes, ptrs);
}

struct bp_fill {
	char *block;
	char *node; /* the next free node */
	void **ptr; /* the next free pointer slot */
};

/* bp_tree_alloc allocates t's block for its nodes (node_size bytes each) and
 * ptrs pointer slots, and points f at it: 0 when out of memory. */
static int bp_tree_alloc(struct bp_tree *t, size_t node_size, intptr_t ptrs, struct bp_fill *f)
{
	t->size = BP_HDR + (size_t)t->nodes * node_size + (size_t)ptrs * sizeof(void *);
	t->block = calloc(1, t->size);
	if (t->block == NULL)
		return 0;
	f->block = t->block;
	f->node = t->block + BP_HDR;
	f->ptr = (void **)(t->block + BP_HDR + (size_t)t->nodes * node_size);
	return 1;
}

static struct ArrowArray *bp_fill_array(struct bp_fill *f, const struct ArrowArray *src)
{
	struct ArrowArray *dst = (struct ArrowArray *)f->node;
	struct ArrowArray **kids;
	int64_t i;

	f->node += sizeof *dst;
	*dst = *src;
	dst->buffers = NULL;
	dst->children = NULL;
	dst->dictionary = NULL;
	if (src->n_buffers > 0) {
		memcpy(f->ptr, src->buffers, (size_t)src->n_buffers * sizeof(void *));
		dst->buffers = (const void **)f->ptr;
		f->ptr += src->n_buffers;
	}
	if (src->n_children > 0) {
		kids = (struct ArrowArray **)f->ptr;
		f->ptr += src->n_children;
		dst->children = kids;
		for (i = 0; i < src->n_children; i++)
			kids[i] = bp_fill_array(f, src->children[i]);
	}
	if (src->dictionary)
		dst->dictionary = bp_fill_array(f, src->dictionary);
	dst->release = bp_array_release;
	dst->private_data = f->block;
	return dst;
}

static struct ArrowSchema *bp_fill_schema(struct bp_fill *f, const struct ArrowSchema *src)
{
	struct ArrowSchema *dst = (struct ArrowSchema *)f->node;
	struct ArrowSchema **kids;
	int64_t i;

	f->node += sizeof *dst;
	*dst = *src;
	dst->children = NULL;
	dst->dictionary = NULL;
	if (src->n_children > 0) {
		kids = (struct ArrowSchema **)f->ptr;
		f->ptr += src->n_children;
		dst->children = kids;
		for (i = 0; i < src->n_children; i++)
			kids[i] = bp_fill_schema(f, src->children[i]);
	}
	if (src->dictionary)
		dst->dictionary = bp_fill_schema(f, src->dictionary);
	dst->release = bp_schema_release;
	dst->private_data = f->block;
	return dst;
}

void bp_template_free(struct bp_template *t)
{
	if (t == NULL)
		return;
	free(t->array.block);
	free(t->schema.block);
	free(t);
}

/* bp_template_new deep-copies the structs of a (unreleased) batch; the caller
 * keeps and later releases a and s. NULL when out of memory or released. */
struct bp_template *bp_template_new(const struct ArrowArray *a, const struct ArrowSchema *s)
{
	struct bp_template *t;
	struct bp_fill fa, fs;
	intptr_t aptrs = 0, sptrs = 0;

	if (a == NULL || s == NULL || a->release == NULL || s->release == NULL)
		return NULL;
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return NULL;
	bp_count_array(a, &t->array.nodes, &aptrs);
	bp_count_schema(s, &t->schema.nodes, &sptrs);
	if (!bp_tree_alloc(&t->array, sizeof(struct ArrowArray), aptrs, &fa) ||
	    !bp_tree_alloc(&t->schema, sizeof(struct ArrowSchema), sptrs, &fs)) {
		bp_template_free(t);
		return NULL;
	}
	bp_fill_array(&fa, a);
	bp_fill_schema(&fs, s);
	return t;
}

/* bp_template_nodes returns the array nodes (which 0) or schema nodes (1). */
intptr_t bp_template_nodes(const struct bp_template *t, intptr_t which)
{
	return which == 0 ? t->array.nodes : t->schema.nodes;
}

/* ---- clones -------------------------------------------------------------- */

/* bp_clone_block copies tree t into a fresh block, counted as a clone whose
 * nodes are all live; *d is how far its internal pointers are to move. NULL
 * when out of memory. */
static char *bp_clone_block(const struct bp_tree *t, uintptr_t *d)
{
	char *blk = malloc(t->size);

	if (blk == NULL)
		return NULL;
	memcpy(blk, t->block, t->size);
	((struct bp_block *)blk)->live = t->nodes;
	*d = (uintptr_t)blk - (uintptr_t)t->block;
	bp_add(BP_BLOCKS, 1);
	bp_add(BP_NODES, t->nodes);
	return blk;
}

/* bp_clone_array moves a fresh clone of the template's array into out. */
int bp_clone_array(const struct bp_template *t, struct ArrowArray *out)
{
	uintptr_t d;
	char *blk = bp_clone_block(&t->array, &d);
	struct ArrowArray *n;
	int64_t i, j;

	if (blk == NULL)
		return ENOMEM;
	n = (struct ArrowArray *)(blk + BP_HDR);
	for (i = 0; i < t->array.nodes; i++) {
		if (n[i].buffers)
			n[i].buffers = BP_RELOC(n[i].buffers, d);
		if (n[i].children) {
			n[i].children = BP_RELOC(n[i].children, d);
			for (j = 0; j < n[i].n_children; j++)
				n[i].children[j] = BP_RELOC(n[i].children[j], d);
		}
		if (n[i].dictionary)
			n[i].dictionary = BP_RELOC(n[i].dictionary, d);
		n[i].private_data = blk;
	}
	*out = n[0];
	n[0].release = NULL; /* the root lives on in out */
	return 0;
}

/* bp_clone_schema moves a fresh clone of the template's schema into out. */
int bp_clone_schema(const struct bp_template *t, struct ArrowSchema *out)
{
	uintptr_t d;
	char *blk = bp_clone_block(&t->schema, &d);
	struct ArrowSchema *n;
	int64_t i, j;

	if (blk == NULL)
		return ENOMEM;
	n = (struct ArrowSchema *)(blk + BP_HDR);
	for (i = 0; i < t->schema.nodes; i++) {
		if (n[i].children) {
			n[i].children = BP_RELOC(n[i].children, d);
			for (j = 0; j < n[i].n_children; j++)
				n[i].children[j] = BP_RELOC(n[i].children[j], d);
		}
		if (n[i].dictionary)
			n[i].dictionary = BP_RELOC(n[i].dictionary, d);
		n[i].private_data = blk;
	}
	*out = n[0];
	n[0].release = NULL;
	return 0;
}

/* bp_clone_batch clones the array into a and the schema into s. */
int bp_clone_batch(const struct bp_template *t, struct ArrowArray *a, struct ArrowSchema *s)
{
	int rc = bp_clone_array(t, a);

	if (rc != 0)
		return rc;
	rc = bp_clone_schema(t, s);
	if (rc != 0)
		a->release(a);
	return rc;
}

/* bp_clone_release clones the array and the schema and releases both: what a
 * consumer of bp_clone_batch pays that is not the consumer's own work. */
int bp_clone_release(const struct bp_template *t)
{
	struct ArrowArray a;
	struct ArrowSchema s;
	int rc = bp_clone_batch(t, &a, &s);

	if (rc != 0)
		return rc;
	a.release(&a);
	s.release(&s);
	return 0;
}

/* bp_clone_release_arrays clones the array and releases it n times: the
 * producer's own work per batch of a bp_stream_new stream. */
int bp_clone_release_arrays(const struct bp_template *t, intptr_t n)
{
	struct ArrowArray a;
	intptr_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = bp_clone_array(t, &a);
		if (rc != 0)
			return rc;
		a.release(&a);
	}
	return 0;
}

/* ---- streams ------------------------------------------------------------- */

struct bp_stream {
	const struct bp_template *t;
	intptr_t left; /* batches still to hand out */
};

static int bp_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
	struct bp_stream *p = s->private_data;

	return bp_clone_schema(p->t, out);
}

static int bp_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
	struct bp_stream *p = s->private_data;

	if (p->left == 0) {
		memset(out, 0, sizeof *out); /* release NULL: the end */
		return 0;
	}
	p->left--;
	return bp_clone_array(p->t, out);
}

static const char *bp_get_last_error(struct ArrowArrayStream *s)
{
	(void)s;
	return NULL;
}

static void bp_stream_release(struct ArrowArrayStream *s)
{
	if (s->release == NULL) {
		bp_add(BP_DOUBLES, 1);
		return;
	}
	free(s->private_data);
	s->release = NULL;
	bp_add(BP_STREAMS_RELEASED, 1);
}

/* bp_stream_new makes in out a stream of `batches` clones of t's batch. */
int bp_stream_new(const struct bp_template *t, intptr_t batches, struct ArrowArrayStream *out)
{
	struct bp_stream *p = malloc(sizeof *p);

	if (p == NULL)
		return ENOMEM;
	p->t = t;
	p->left = batches;
	out->get_schema = bp_get_schema;
	out->get_next = bp_get_next;
	out->get_last_error = bp_get_last_error;
	out->release = bp_stream_release;
	out->private_data = p;
	bp_add(BP_STREAMS, 1);
	return 0;
}

/* ---- the consumer -------------------------------------------------------- */

static uint64_t bp_sink; /* what the walks read, so that they are not elided */

static uint64_t bp_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211u;
}

static intptr_t bp_walk_array(const struct ArrowArray *a, uint64_t *h)
{
	int64_t i;
	intptr_t n = 1;

	*h = bp_mix(*h, (uint64_t)a->length);
	*h = bp_mix(*h, (uint64_t)a->null_count);
	*h = bp_mix(*h, (uint64_t)a->offset);
	for (i = 0; i < a->n_buffers; i++)
		*h = bp_mix(*h, (uint64_t)(uintptr_t)a->buffers[i]);
	for (i = 0; i < a->n_children; i++)
		n += bp_walk_array(a->children[i], h);
	if (a->dictionary)
		n += bp_walk_array(a->dictionary, h);
	return n;
}

static uint64_t bp_mix_string(uint64_t h, const char *p)
{
	if (p == NULL)
		return bp_mix(h, 0);
	for (; *p; p++)
		h = bp_mix(h, (unsigned char)*p);
	return h;
}

static intptr_t bp_walk_schema(const struct ArrowSchema *s, uint64_t *h)
{
	int64_t i;
	intptr_t n = 1;

	*h = bp_mix_string(*h, s->format);
	*h = bp_mix_string(*h, s->name);
	*h = bp_mix(*h, (uint64_t)(uintptr_t)s->metadata);
	*h = bp_mix(*h, (uint64_t)s->flags);
	for (i = 0; i < s->n_children; i++)
		n += bp_walk_schema(s->children[i], h);
	if (s->dictionary)
		n += bp_walk_schema(s->dictionary, h);
	return n;
}

/* bp_walk_template reads the template's trees as bp_walk_release reads an
 * export, without releasing anything: the consumer's own work. */
void bp_walk_template(const struct bp_template *t)
{
	uint64_t h = 0;

	bp_walk_array((const struct ArrowArray *)(t->array.block + BP_HDR), &h);
	bp_walk_schema((const struct ArrowSchema *)(t->schema.block + BP_HDR), &h);
	bp_sink ^= h;
}

/* bp_walk_release reads the whole of an exported batch and releases it:
 * 0, or -1 when either struct came released. */
int bp_walk_release(struct ArrowArray *a, struct ArrowSchema *s)
{
	uint64_t h = 0;
	intptr_t na, ns;

	if (a->release == NULL || s->release == NULL)
		return -1;
	na = bp_walk_array(a, &h);
	ns = bp_walk_schema(s, &h);
	bp_sink ^= h; /* one thread walks at a time */
	__atomic_store_n(&bp_counters[BP_WALK_ARRAYS], na, __ATOMIC_RELAXED);
	__atomic_store_n(&bp_counters[BP_WALK_SCHEMAS], ns, __ATOMIC_RELAXED);
	a->release(a);
	s->release(s);
	return 0;
}
