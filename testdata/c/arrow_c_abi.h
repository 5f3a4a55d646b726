/*
 * Struct definitions of the Arrow C Data, C Stream, C Device and Async Device
 * Stream interfaces, written for this project's C test libraries from the
 * interface specification. Layout is what matters here: field order and C
 * types are those of the spec (see also ../shared/abi_layout.tsv).
 */
#ifndef CDEVICE_TEST_ARROW_C_ABI_H
#define CDEVICE_TEST_ARROW_C_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ArrowSchema.flags bits. */
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

/* Device types; the numbers are DLPack's DLDeviceType values (5, 6 unused). */
typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

/* --- C Data Interface --------------------------------------------------- */

struct ArrowSchema {
	const char *format;
	const char *name;
	const char *metadata; /* binary key/value blob, or NULL */
	int64_t flags;
	int64_t n_children;
	struct ArrowSchema **children;
	struct ArrowSchema *dictionary;
	void (*release)(struct ArrowSchema *);
	void *private_data;
};

struct ArrowArray {
	int64_t length;
	int64_t null_count;
	int64_t offset;
	int64_t n_buffers;
	int64_t n_children;
	const void **buffers;
	struct ArrowArray **children;
	struct ArrowArray *dictionary;
	void (*release)(struct ArrowArray *);
	void *private_data;
};

/* --- C Stream Interface ------------------------------------------------- */

struct ArrowArrayStream {
	int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
	int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
	const char *(*get_last_error)(struct ArrowArrayStream *);
	void (*release)(struct ArrowArrayStream *);
	void *private_data;
};

/* --- C Device Data Interface -------------------------------------------- */

struct ArrowDeviceArray {
	struct ArrowArray array;
	int64_t device_id;
	ArrowDeviceType device_type;
	void *sync_event; /* cudaEvent_t*, hipEvent_t*, cl_event*; NULL on CPU */
	int64_t reserved[3];
};

struct ArrowDeviceArrayStream {
	ArrowDeviceType device_type;
	int (*get_schema)(struct ArrowDeviceArrayStream *, struct ArrowSchema *out);
	int (*get_next)(struct ArrowDeviceArrayStream *, struct ArrowDeviceArray *out);
	const char *(*get_last_error)(struct ArrowDeviceArrayStream *);
	void (*release)(struct ArrowDeviceArrayStream *);
	void *private_data;
};

/* --- Async Device Stream Interface -------------------------------------- */

struct ArrowAsyncTask {
	/* The first argument is the task itself (the spec's prose names a
	 * nonexistent struct ArrowArrayTask). */
	int (*extract_data)(struct ArrowAsyncTask *, struct ArrowDeviceArray *out);
	void *private_data;
};

/* No release member: the producer frees it after calling the handler's
 * release. */
struct ArrowAsyncProducer {
	ArrowDeviceType device_type;
	void (*request)(struct ArrowAsyncProducer *, int64_t n);
	void (*cancel)(struct ArrowAsyncProducer *);
	const char *additional_metadata;
	void *private_data;
};

struct ArrowAsyncDeviceStreamHandler {
	int (*on_schema)(struct ArrowAsyncDeviceStreamHandler *, struct ArrowSchema *stream_schema);
	int (*on_next_task)(struct ArrowAsyncDeviceStreamHandler *, struct ArrowAsyncTask *task,
	                    const char *metadata);
	void (*on_error)(struct ArrowAsyncDeviceStreamHandler *, int code, const char *message,
	                 const char *metadata);
	void (*release)(struct ArrowAsyncDeviceStreamHandler *);
	struct ArrowAsyncProducer *producer;
	void *private_data;
};

#ifdef __cplusplus
}
#endif

#endif
