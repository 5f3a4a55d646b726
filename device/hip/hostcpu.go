package hip

import (
	"unsafe"

	"github.com/purearrow/cdevice/internal/ffi"
)

// OpenCL's values (CL/cl.h).
const (
	clDeviceType    = 0x1000 // cl_device_info CL_DEVICE_TYPE
	clDeviceTypeCPU = 1 << 1
)

// chipStar's hipGetBackendNativeHandles(stream, handles, count): asked with
// handles NULL, it writes how many there are; with count NULL, it fills
// them. On its OpenCL backend they are the backend's name ("opencl"), then
// the cl_platform_id, cl_device_id, cl_context and cl_command_queue behind
// the stream (chipStar also switches that stream's queue to profiling,
// hence a stream made for the question). Level Zero, its other backend,
// drives GPUs only.
const (
	nativeBackend = 0
	nativeDevice  = 2
	maxNative     = 16 // more would not be chipStar's OpenCL layout
)

// hostCPU is the table's HostCPU: a HIP device is the host's CPU when the
// runtime is chipStar on an OpenCL device of type CL_DEVICE_TYPE_CPU.
// clGetDeviceInfo is looked up through the HIP library (dlsym searches its
// dependencies), so it is the OpenCL library chipStar itself loaded; where
// the lookup cannot reach it (LoadLibrary's GetProcAddress does not search
// dependencies), or the library is not chipStar, the runtime cannot tell.
func hostCPU(lib *ffi.Library) func(stream uintptr) bool {
	native, err := lib.Symbol("hipGetBackendNativeHandles")
	if err != nil {
		return nil
	}
	info, err := lib.Symbol("clGetDeviceInfo")
	if err != nil {
		return nil
	}
	return func(stream uintptr) bool {
		// handles[maxNative] is the count, then the device type: C writes
		// them, so they live off the Go heap.
		buf, err := ffi.Calloc((maxNative + 2) * 8)
		if err != nil {
			return false
		}
		defer ffi.Free(buf)
		handles := unsafe.Slice((*uintptr)(buf), maxNative)
		count := unsafe.Add(buf, maxNative*8)
		typ := unsafe.Add(buf, (maxNative+1)*8)
		if int32(ffi.Call(native, stream, 0, uintptr(count))) != 0 {
			return false
		}
		if n := *(*int32)(count); n <= nativeDevice || n > maxNative {
			return false
		}
		if int32(ffi.Call(native, stream, uintptr(buf), 0)) != 0 || handles[nativeBackend] == 0 ||
			ffi.GoString(handles[nativeBackend]) != "opencl" {
			return false
		}
		if int32(ffi.Call(info, handles[nativeDevice], clDeviceType, 8, uintptr(typ), 0)) != 0 {
			return false
		}
		return *(*uint64)(typ)&clDeviceTypeCPU != 0
	}
}
