/* opencl_dl.h: the subset of OpenCL the C test peers use (opencl_peer.c,
 * dlpack.c), declared from CL/cl.h (the Khronos headers may be absent), and
 * cl_load, which opens the library the Go side loaded (ctest compiles
 * without extra libraries). */
#ifndef CDEVICE_OPENCL_DL_H
#define CDEVICE_OPENCL_DL_H

#include "dl.h"
#include <stddef.h>
#include <stdint.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef void *cl_context, *cl_command_queue, *cl_mem, *cl_event;

#define CL_SUCCESS 0
#define CL_FALSE 0
#define CL_TRUE 1
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_COMPLETE 0x0
#define CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3

static struct {
	cl_mem (*createBuffer)(cl_context, cl_bitfield, size_t, void *, cl_int *);
	cl_int (*releaseMemObject)(cl_mem);
	void *(*svmAlloc)(cl_context, cl_bitfield, size_t, cl_uint);
	void (*svmFree)(cl_context, void *);
	cl_int (*enqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint,
				     const cl_event *, cl_event *);
	cl_int (*enqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint,
				    const cl_event *, cl_event *);
	cl_int (*enqueueSVMMemcpy)(cl_command_queue, cl_uint, void *, const void *, size_t, cl_uint,
				   const cl_event *, cl_event *);
	cl_int (*enqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event *, cl_event *);
	cl_event (*createUserEvent)(cl_context, cl_int *);
	cl_int (*setUserEventStatus)(cl_event, cl_int);
	cl_int (*getEventInfo)(cl_event, cl_uint, size_t, void *, size_t *);
	cl_int (*waitForEvents)(cl_uint, const cl_event *);
	cl_int (*retainEvent)(cl_event);
	cl_int (*releaseEvent)(cl_event);
	cl_int (*finish)(cl_command_queue);
	cl_int (*flush)(cl_command_queue);
} cl;

/* cl_load fills cl from the OpenCL library at lib: 0, or -1 if the library
 * or a symbol is missing. */
static int cl_load(const char *lib) {
	void *h = dl_open(lib);
	if (!h)
		return -1;
#define SYM(field, name)                                     \
	do {                                                  \
		*(void **)&cl.field = dl_sym(h, name);         \
		if (!cl.field)                                \
			return -1;                            \
	} while (0)
	SYM(createBuffer, "clCreateBuffer");
	SYM(releaseMemObject, "clReleaseMemObject");
	SYM(svmAlloc, "clSVMAlloc");
	SYM(svmFree, "clSVMFree");
	SYM(enqueueWriteBuffer, "clEnqueueWriteBuffer");
	SYM(enqueueReadBuffer, "clEnqueueReadBuffer");
	SYM(enqueueSVMMemcpy, "clEnqueueSVMMemcpy");
	SYM(enqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList");
	SYM(createUserEvent, "clCreateUserEvent");
	SYM(setUserEventStatus, "clSetUserEventStatus");
	SYM(getEventInfo, "clGetEventInfo");
	SYM(waitForEvents, "clWaitForEvents");
	SYM(retainEvent, "clRetainEvent");
	SYM(releaseEvent, "clReleaseEvent");
	SYM(finish, "clFinish");
	SYM(flush, "clFlush");
#undef SYM
	return 0;
}

#endif
