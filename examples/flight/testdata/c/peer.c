// peer.c: a C producer and a C consumer of ArrowDeviceArrayStreams on the
// CPU, for the flight example's tests (compiled with gcc when they run).
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARROW_DEVICE_CPU 1

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

typedef int32_t ArrowDeviceType;

struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void* sync_event;
  int64_t reserved[3];
};

struct ArrowDeviceArrayStream {
  ArrowDeviceType device_type;
  int (*get_schema)(struct ArrowDeviceArrayStream*, struct ArrowSchema*);
  int (*get_next)(struct ArrowDeviceArrayStream*, struct ArrowDeviceArray*);
  const char* (*get_last_error)(struct ArrowDeviceArrayStream*);
  void (*release)(struct ArrowDeviceArrayStream*);
  void* private_data;
};

// ---- producer: BATCHES batches of ROWS rows of struct<x: int64 not null>,
// x counting up from 0 across the stream.

struct producer {
  int64_t batches, rows, next;
};

static void release_child_schema(struct ArrowSchema* s) { s->release = NULL; }

static void release_schema(struct ArrowSchema* s) {
  struct ArrowSchema* child = s->children[0];
  if (child->release) child->release(child);
  free(child);
  free(s->children);
  s->release = NULL;
}

static int produce_schema(struct ArrowDeviceArrayStream* st, struct ArrowSchema* out) {
  (void)st;
  struct ArrowSchema* child = calloc(1, sizeof *child);
  struct ArrowSchema** children = calloc(1, sizeof *children);
  if (!child || !children) { free(child); free(children); return ENOMEM; }
  child->format = "l";
  child->name = "x";
  child->release = release_child_schema;
  children[0] = child;
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = 1;
  out->children = children;
  out->release = release_schema;
  return 0;
}

struct batch {
  struct ArrowArray child;
  struct ArrowArray* children[1];
  const void* top_buffers[1];
  const void* child_buffers[2];
  int64_t* values;
};

static void release_child_array(struct ArrowArray* a) { a->release = NULL; }

static void release_batch(struct ArrowArray* a) {
  struct batch* b = a->private_data;
  if (b->child.release) b->child.release(&b->child);
  free(b->values);
  free(b);
  a->release = NULL;
}

static int produce_next(struct ArrowDeviceArrayStream* st, struct ArrowDeviceArray* out) {
  struct producer* p = st->private_data;
  memset(out, 0, sizeof *out);
  out->device_type = ARROW_DEVICE_CPU;
  out->device_id = -1;
  if (p->next == p->batches) return 0;  // end: out->array.release is NULL
  struct batch* b = calloc(1, sizeof *b);
  int64_t* values = malloc((size_t)(p->rows > 0 ? p->rows : 1) * sizeof(int64_t));
  if (!b || !values) { free(b); free(values); return ENOMEM; }
  for (int64_t i = 0; i < p->rows; i++) values[i] = p->next * p->rows + i;
  b->values = values;
  b->child_buffers[0] = NULL;
  b->child_buffers[1] = values;
  b->child.length = p->rows;
  b->child.n_buffers = 2;
  b->child.buffers = b->child_buffers;
  b->child.release = release_child_array;
  b->children[0] = &b->child;
  b->top_buffers[0] = NULL;
  out->array.length = p->rows;
  out->array.n_buffers = 1;
  out->array.buffers = b->top_buffers;
  out->array.n_children = 1;
  out->array.children = b->children;
  out->array.release = release_batch;
  out->array.private_data = b;
  p->next++;
  return 0;
}

static const char* produce_error(struct ArrowDeviceArrayStream* st) { (void)st; return NULL; }

static void release_producer(struct ArrowDeviceArrayStream* st) {
  free(st->private_data);
  st->release = NULL;
}

int peer_produce(struct ArrowDeviceArrayStream* out, int64_t batches, int64_t rows) {
  if (!out || batches < 0 || rows < 0) return EINVAL;
  struct producer* p = calloc(1, sizeof *p);
  if (!p) return ENOMEM;
  p->batches = batches;
  p->rows = rows;
  out->device_type = ARROW_DEVICE_CPU;
  out->get_schema = produce_schema;
  out->get_next = produce_next;
  out->get_last_error = produce_error;
  out->release = release_producer;
  out->private_data = p;
  return 0;
}

// ---- consumer: reads a CPU stream of struct<x: int64, ...> to its end,
// summing x (nulls skipped), and releases everything. Returns 0, or an errno
// with a message in err.

int peer_consume(struct ArrowDeviceArrayStream* in, int64_t* batches, int64_t* rows,
                 int64_t* sum, int64_t max_batches, char* err, int64_t errlen) {
  struct ArrowSchema schema;
  int rc = 0;
  *batches = *rows = *sum = 0;
  err[0] = 0;
  if (in->device_type != ARROW_DEVICE_CPU) {
    snprintf(err, (size_t)errlen, "device type %d, want CPU", in->device_type);
    in->release(in);
    return EINVAL;
  }
  if ((rc = in->get_schema(in, &schema)) != 0) {
    const char* m = in->get_last_error(in);
    snprintf(err, (size_t)errlen, "get_schema: %d: %s", rc, m ? m : "");
    in->release(in);
    return rc;
  }
  int ok = strcmp(schema.format, "+s") == 0 && schema.n_children >= 1 &&
           strcmp(schema.children[0]->format, "l") == 0;
  schema.release(&schema);
  if (!ok) {
    snprintf(err, (size_t)errlen, "schema is not struct<int64, ...>");
    in->release(in);
    return EINVAL;
  }
  for (;;) {
    if (max_batches >= 0 && *batches == max_batches) break;  // stop early
    struct ArrowDeviceArray arr;
    if ((rc = in->get_next(in, &arr)) != 0) {
      const char* m = in->get_last_error(in);
      snprintf(err, (size_t)errlen, "get_next: %d: %s", rc, m ? m : "");
      break;
    }
    if (arr.array.release == NULL) break;  // end of stream
    struct ArrowArray* x = arr.array.children[0];
    const uint8_t* valid = x->buffers[0];
    const int64_t* v = x->buffers[1];
    int64_t off = arr.array.offset + x->offset;
    for (int64_t i = 0; i < arr.array.length; i++) {
      int64_t j = off + i;
      if (valid && !(valid[j / 8] & (1 << (j % 8)))) continue;
      *sum += v[j];
    }
    *rows += arr.array.length;
    (*batches)++;
    arr.array.release(&arr.array);
  }
  in->release(in);
  return rc;
}
