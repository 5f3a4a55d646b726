/* duckdb_consumer.c: the C consumer of examples/duckdb's device test. It
 * drains an ArrowDeviceArrayStream whose batches have an int64 column 0,
 * counting rows and, where the device is the CPU, summing the column's
 * non-null values. */
#include <stdint.h>
#include <string.h>
#include "arrow_c_abi.h"

/* dc_drain: returns 0, or the failing callback's code (-1: bad stream or
 * schema). out[0] = rows, out[1] = sum, out[2] = batches, out[3] = the
 * device type of the last batch. */
int64_t dc_drain(struct ArrowDeviceArrayStream *s, int64_t *out)
{
	struct ArrowSchema schema;
	memset(out, 0, 4 * sizeof(int64_t));
	if (s == NULL || s->release == NULL) return -1;
	int rc = s->get_schema(s, &schema);
	if (rc != 0) return rc;
	int ok = schema.n_children >= 1 && strcmp(schema.children[0]->format, "l") == 0;
	schema.release(&schema);
	if (!ok) { s->release(s); return -1; }
	for (;;) {
		struct ArrowDeviceArray da;
		rc = s->get_next(s, &da);
		if (rc != 0) break;
		if (da.array.release == NULL) break; /* end of stream */
		struct ArrowArray *col = da.array.children[0];
		out[0] += da.array.length;
		out[2]++;
		out[3] = da.device_type;
		if (da.device_type == ARROW_DEVICE_CPU) {
			const uint8_t *valid = col->buffers[0];
			const int64_t *v = col->buffers[1];
			for (int64_t i = 0; i < col->length; i++) {
				int64_t j = i + col->offset;
				if (valid == NULL || (valid[j / 8] >> (j % 8)) & 1) out[1] += v[j];
			}
		}
		da.array.release(&da.array);
	}
	s->release(s);
	return rc;
}
