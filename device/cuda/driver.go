package cuda

import (
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// EnvDriverLibrary names the environment variable with the path of the CUDA
// driver library (libcuda.so.1, nvcuda.dll) to load for the driver API.
// When set, no other driver library is tried (nor the runtime, unless
// EnvLibrary is set too).
const EnvDriverLibrary = "CDEVICE_CUDA_DRIVER_LIBRARY"

// EnvAPI names the environment variable that picks one CUDA API: "runtime"
// (libcudart only) or "driver" (libcuda only). Unset, the runtime is
// tried first and the driver API where no runtime serves; another value
// is an error wrapping device.ErrInvalid.
const EnvAPI = "CDEVICE_CUDA_API"

// Values from CUDA's cuda.h.
const cuMemAttachGlobal = 1 // CU_MEM_ATTACH_GLOBAL

// driverTable is CUDA's driver API: the same devices, kinds of memory,
// attribute numbers, flags and codes as the runtime (NVIDIA numbers them
// alike), through libcuda's names, the _v2 entry points where the driver
// exports them. A CUstream is a cudaStream_t and a CUevent a cudaEvent_t,
// so arrays move between programs that use either API.
var driverTable = gpurt.Table{
	Name: "cuda", Title: "CUDA", Driver: "NVIDIA driver", EnvLibrary: EnvDriverLibrary, SystemLibrary: true,
	API: gpurt.DriverAPI,
	Symbols: map[gpurt.Op][]string{
		gpurt.GetDeviceCount:        {"cuDeviceGetCount"},
		gpurt.SetDevice:             {"cuCtxSetCurrent"},
		gpurt.DriverGetVersion:      {"cuDriverGetVersion"},
		gpurt.GetErrorString:        {"cuGetErrorString"},
		gpurt.GetErrorName:          {"cuGetErrorName"},
		gpurt.DeviceGetAttribute:    {"cuDeviceGetAttribute"},
		gpurt.MemGetInfo:            {"cuMemGetInfo_v2"},
		gpurt.MemcpyAsync:           {"cuMemcpyAsync"},
		gpurt.StreamCreateWithFlags: {"cuStreamCreate"},
		gpurt.StreamSynchronize:     {"cuStreamSynchronize"},
		gpurt.StreamDestroy:         {"cuStreamDestroy_v2"},
		gpurt.StreamWaitEvent:       {"cuStreamWaitEvent"},
		gpurt.EventCreateWithFlags:  {"cuEventCreate"},
		gpurt.EventRecord:           {"cuEventRecord"},
		gpurt.EventSynchronize:      {"cuEventSynchronize"},
		gpurt.EventDestroy:          {"cuEventDestroy_v2"},
		gpurt.EventQuery:            {"cuEventQuery"},
		gpurt.Init:                  {"cuInit"},
		gpurt.DeviceGet:             {"cuDeviceGet"},
		gpurt.DeviceGetName:         {"cuDeviceGetName"},
		gpurt.PrimaryCtxRetain:      {"cuDevicePrimaryCtxRetain"},
		gpurt.PrimaryCtxRelease:     {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, // _v2 from CUDA 11 drivers
		gpurt.MemcpyHtoDAsync:       {"cuMemcpyHtoDAsync_v2"},
		gpurt.MemcpyDtoHAsync:       {"cuMemcpyDtoHAsync_v2"},
		gpurt.MemcpyDtoDAsync:       {"cuMemcpyDtoDAsync_v2"},
		// CUDA 12.8's, with a failIdx argument; CUDA 13's _v2 has none.
		gpurt.MemcpyBatchAsync: {"cuMemcpyBatchAsync_v2", "cuMemcpyBatchAsync"},
	},
	Optional: []gpurt.Op{gpurt.MemcpyBatchAsync},
	Kinds: []gpurt.Kind{
		{Memory: gpurt.DeviceMemory, Type: abi.DeviceCUDA, Alloc: "cuMemAlloc_v2", Free: "cuMemFree_v2"},
		{Memory: gpurt.HostMemory, Type: abi.DeviceCUDAHost, Alloc: "cuMemAllocHost_v2", Free: "cuMemFreeHost"},
		{Memory: gpurt.ManagedMemory, Type: abi.DeviceCUDAManaged, Alloc: "cuMemAllocManaged", Free: "cuMemFree_v2",
			AllocArgs: []uintptr{cuMemAttachGlobal}},
	},
	// CU_DEVICE_ATTRIBUTE_*: the runtime's numbers.
	Attributes:            table.Attributes,
	ConcurrentManagedAttr: attrConcurrentMgd,
	// Only pick the copy function (the driver API takes no kind).
	Memcpy: table.Memcpy,
	// CU_STREAM_NON_BLOCKING, CU_EVENT_DISABLE_TIMING.
	StreamNonBlocking: 1, EventDisableTiming: 2,
	// CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_NOT_READY:
	// the driver is never older than itself.
	Codes:         gpurt.Codes{NoDevice: 100, StubLibrary: 34, NotReady: 600},
	FormatVersion: table.FormatVersion,
	Wrap:          table.Wrap,
}
