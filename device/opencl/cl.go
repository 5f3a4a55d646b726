package opencl

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Values from the Khronos headers (CL/cl.h, CL/cl_ext.h).
const (
	clSuccess               = 0
	clDeviceNotFound        = -1
	clInvalidContext        = -34
	clPlatformNotFoundKHR   = -1001
	clFalse                 = 0
	clTrue                  = 1
	clPlatformVersion       = 0x0901
	clDeviceTypeCPU         = 1 << 1
	clDeviceTypeAll         = 0xFFFFFFFF
	clDeviceType            = 0x1000
	clDeviceGlobalMemSize   = 0x101F
	clDeviceName            = 0x102B
	clDeviceVendor          = 0x102C
	clDeviceVersion         = 0x102F
	clDeviceSVMCapabilities = 0x1053
	clSVMCoarseGrainBuffer  = 1 << 0
	clContextPlatform       = 0x1084
	clMemReadWrite          = 1 << 0
	clEventExecutionStatus  = 0x11D3
	clComplete              = 0
)

var errorNames = map[int32]string{
	0:     "CL_SUCCESS",
	-1:    "CL_DEVICE_NOT_FOUND",
	-2:    "CL_DEVICE_NOT_AVAILABLE",
	-3:    "CL_COMPILER_NOT_AVAILABLE",
	-4:    "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5:    "CL_OUT_OF_RESOURCES",
	-6:    "CL_OUT_OF_HOST_MEMORY",
	-7:    "CL_PROFILING_INFO_NOT_AVAILABLE",
	-8:    "CL_MEM_COPY_OVERLAP",
	-9:    "CL_IMAGE_FORMAT_MISMATCH",
	-10:   "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	-11:   "CL_BUILD_PROGRAM_FAILURE",
	-12:   "CL_MAP_FAILURE",
	-13:   "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	-14:   "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-15:   "CL_COMPILE_PROGRAM_FAILURE",
	-16:   "CL_LINKER_NOT_AVAILABLE",
	-17:   "CL_LINK_PROGRAM_FAILURE",
	-18:   "CL_DEVICE_PARTITION_FAILED",
	-19:   "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	-30:   "CL_INVALID_VALUE",
	-31:   "CL_INVALID_DEVICE_TYPE",
	-32:   "CL_INVALID_PLATFORM",
	-33:   "CL_INVALID_DEVICE",
	-34:   "CL_INVALID_CONTEXT",
	-35:   "CL_INVALID_QUEUE_PROPERTIES",
	-36:   "CL_INVALID_COMMAND_QUEUE",
	-37:   "CL_INVALID_HOST_PTR",
	-38:   "CL_INVALID_MEM_OBJECT",
	-39:   "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
	-40:   "CL_INVALID_IMAGE_SIZE",
	-41:   "CL_INVALID_SAMPLER",
	-42:   "CL_INVALID_BINARY",
	-43:   "CL_INVALID_BUILD_OPTIONS",
	-44:   "CL_INVALID_PROGRAM",
	-45:   "CL_INVALID_PROGRAM_EXECUTABLE",
	-46:   "CL_INVALID_KERNEL_NAME",
	-47:   "CL_INVALID_KERNEL_DEFINITION",
	-48:   "CL_INVALID_KERNEL",
	-49:   "CL_INVALID_ARG_INDEX",
	-50:   "CL_INVALID_ARG_VALUE",
	-51:   "CL_INVALID_ARG_SIZE",
	-52:   "CL_INVALID_KERNEL_ARGS",
	-53:   "CL_INVALID_WORK_DIMENSION",
	-54:   "CL_INVALID_WORK_GROUP_SIZE",
	-55:   "CL_INVALID_WORK_ITEM_SIZE",
	-56:   "CL_INVALID_GLOBAL_OFFSET",
	-57:   "CL_INVALID_EVENT_WAIT_LIST",
	-58:   "CL_INVALID_EVENT",
	-59:   "CL_INVALID_OPERATION",
	-60:   "CL_INVALID_GL_OBJECT",
	-61:   "CL_INVALID_BUFFER_SIZE",
	-62:   "CL_INVALID_MIP_LEVEL",
	-63:   "CL_INVALID_GLOBAL_WORK_SIZE",
	-64:   "CL_INVALID_PROPERTY",
	-65:   "CL_INVALID_IMAGE_DESCRIPTOR",
	-66:   "CL_INVALID_COMPILER_OPTIONS",
	-67:   "CL_INVALID_LINKER_OPTIONS",
	-68:   "CL_INVALID_DEVICE_PARTITION_COUNT",
	-69:   "CL_INVALID_PIPE_SIZE",
	-70:   "CL_INVALID_DEVICE_QUEUE",
	-71:   "CL_INVALID_SPEC_ID",
	-72:   "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

func errorName(code int32) string { return errorNames[code] }

// api holds the entry points of one loaded OpenCL library.
type api struct {
	lib *ffi.Library

	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo uintptr
	createContext, releaseContext                                uintptr
	createCommandQueue, createQueueWithProperties                uintptr
	releaseCommandQueue, finish, flush                           uintptr
	createBuffer, releaseMemObject                               uintptr
	enqueueWriteBuffer, enqueueReadBuffer, enqueueCopyBuffer     uintptr
	enqueueMarkerWithWaitList, enqueueBarrierWithWaitList        uintptr
	waitForEvents, releaseEvent, getEventInfo                    uintptr
	svmAlloc, svmFree, enqueueSVMMemcpy                          uintptr // OpenCL 2.0, optional
}

func bind(lib *ffi.Library) (*api, error) {
	a := &api{lib: lib}
	syms := []struct {
		name     string
		p        *uintptr
		required bool
	}{
		{"clGetPlatformIDs", &a.getPlatformIDs, true},
		{"clGetPlatformInfo", &a.getPlatformInfo, true},
		{"clGetDeviceIDs", &a.getDeviceIDs, true},
		{"clGetDeviceInfo", &a.getDeviceInfo, true},
		{"clCreateContext", &a.createContext, true},
		{"clReleaseContext", &a.releaseContext, true},
		{"clCreateCommandQueue", &a.createCommandQueue, false},
		{"clCreateCommandQueueWithProperties", &a.createQueueWithProperties, false},
		{"clReleaseCommandQueue", &a.releaseCommandQueue, true},
		{"clFinish", &a.finish, true},
		{"clFlush", &a.flush, true},
		{"clCreateBuffer", &a.createBuffer, true},
		{"clReleaseMemObject", &a.releaseMemObject, true},
		{"clEnqueueWriteBuffer", &a.enqueueWriteBuffer, true},
		{"clEnqueueReadBuffer", &a.enqueueReadBuffer, true},
		{"clEnqueueCopyBuffer", &a.enqueueCopyBuffer, true},
		{"clEnqueueMarkerWithWaitList", &a.enqueueMarkerWithWaitList, true},
		{"clEnqueueBarrierWithWaitList", &a.enqueueBarrierWithWaitList, true},
		{"clWaitForEvents", &a.waitForEvents, true},
		{"clReleaseEvent", &a.releaseEvent, true},
		{"clGetEventInfo", &a.getEventInfo, true},
		{"clSVMAlloc", &a.svmAlloc, false},
		{"clSVMFree", &a.svmFree, false},
		{"clEnqueueSVMMemcpy", &a.enqueueSVMMemcpy, false},
	}
	for _, s := range syms {
		p, err := lib.Symbol(s.name)
		if err != nil && s.required {
			return nil, fmt.Errorf("%w: opencl: %s lacks %s", device.ErrMissingSymbol, lib.Path(), s.name)
		}
		*s.p = p
	}
	if a.createCommandQueue == 0 && a.createQueueWithProperties == 0 {
		return nil, fmt.Errorf("%w: opencl: clCreateCommandQueue (nor clCreateCommandQueueWithProperties) in %s",
			device.ErrMissingSymbol, lib.Path())
	}
	return a, nil
}

// hasSVM reports whether the library exports the OpenCL 2.0 SVM calls.
func (a *api) hasSVM() bool {
	return a.svmAlloc != 0 && a.svmFree != 0 && a.enqueueSVMMemcpy != 0
}

// check turns a cl_int result into nil or a *device.RuntimeError.
func check(call string, r uintptr) error {
	if code := int32(r); code != clSuccess {
		return clError(call, code)
	}
	return nil
}

func clError(call string, code int32) error {
	return &device.RuntimeError{Runtime: "opencl", Call: call, Code: int(code), Message: errorName(code)}
}

// isCode reports whether err is the runtime's error code.
func isCode(err error, code int32) bool {
	var re *device.RuntimeError
	return errors.As(err, &re) && re.Code == int(code)
}

const wordSize = unsafe.Sizeof(uintptr(0))

// cmem is a block of C heap memory for out-parameters: Go stacks move, so a
// pointer to a Go local must never be handed to C as a uintptr.
type cmem struct{ p unsafe.Pointer }

// calloc's rare failure (no C library, the C heap exhausted) wraps
// device.ErrRuntime, as every error of a Device does.
func calloc(n uintptr) (cmem, error) {
	p, err := ffi.Calloc(n)
	if err != nil {
		return cmem{}, fmt.Errorf("%w: opencl: %w", device.ErrRuntime, err)
	}
	return cmem{p}, nil
}

func (m cmem) addr() uintptr            { return uintptr(m.p) }
func (m cmem) free()                    { ffi.Free(m.p) }
func (m cmem) word(i int) uintptr       { return *(*uintptr)(unsafe.Add(m.p, uintptr(i)*wordSize)) }
func (m cmem) setWord(i int, v uintptr) { *(*uintptr)(unsafe.Add(m.p, uintptr(i)*wordSize)) = v }
func (m cmem) int32() int32             { return *(*int32)(m.p) }
func (m cmem) uint32() uint32           { return *(*uint32)(m.p) }
func (m cmem) uint64() uint64           { return *(*uint64)(m.p) }

// escapeFlag is never set; it makes escape look like a store so that the
// memory handed to it is on the heap (Go heap memory does not move; a stack
// buffer would, and would die when the caller returns).
var escapeFlag bool

//lint:ignore U1000 written only in a branch never taken: the store is what makes the argument escape
var escapeSink *byte

//go:noinline
func escape(p *byte) {
	if escapeFlag {
		escapeSink = p
	}
}
