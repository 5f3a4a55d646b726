// Package cuda is the CUDA backend: the CUDA runtime (libcudart) or, where
// no runtime serves, CUDA's driver API (libcuda), loaded at run time, no
// cgo and no CUDA toolkit needed to build. HIP copies the CUDA runtime API,
// and package hip and this package share one implementation.
//
// Each CUDA device ordinal n gives three devices: cuda:n (cudaMalloc),
// cuda_host:n (cudaMallocHost, pinned host memory) and cuda_managed:n
// (cudaMallocManaged). The sync_event of their arrays is a cudaEvent_t*.
// A nil stream is a non-blocking stream of the device made at probe.
// Devices are device.ForeignStreams: a cudaStream_t of the same GPU that
// other code made waits for our events, and our streams for it. A bad
// stream or event handle is undefined behaviour, as it is for the runtime.
//
// The runtime is found, in order: the path in $CDEVICE_CUDA_LIBRARY (alone
// when set), then libcudart.so.13, .so.12, .so.11.0 and .so (CUDA 13, 12
// and 11; the dynamic loader's search), $CUDA_PATH/lib64/libcudart.so* and
// /usr/local/cuda/lib64/libcudart.so*. On Windows: %CUDA_PATH%\bin and
// bin\x64, then cudart64_13.dll, cudart64_12.dll and cudart64_110.dll in
// the application's folder and PATH's absolute folders, never the current
// directory. NVIDIA ships no runtime for other systems, where only
// $CDEVICE_CUDA_LIBRARY is tried. $CUDA_PATH counts only when absolute. Each library that loads is tried in turn, so that the newest
// runtime the driver supports wins: one that needs a newer driver
// (cudaErrorInsufficientDriver, e.g. libcudart.so.13 on a CUDA 12 driver)
// or lacks a function this package needs is skipped for the next, and
// device.Info.Skipped says why.
//
// Where no runtime serves (a GPU node with the NVIDIA driver and no
// toolkit has libcuda.so.1 alone), the driver API is used: the path in
// $CDEVICE_CUDA_DRIVER_LIBRARY (alone when set), else libcuda.so.1,
// libcuda.so and WSL's /usr/lib/wsl/lib/libcuda.so.1 (nvcuda.dll in
// System32 on Windows, and nowhere else). It gives the same devices and events through the driver's
// names (cuMemAlloc_v2 for cudaMalloc, cuEventRecord for cudaEventRecord),
// each GPU's primary context retained for the process and made current on
// the calling thread, as cudaSetDevice does; device.Info.Version reads
// "driver API 12.9" and device.Info.Note says why the runtime did not
// serve. A CUevent is a cudaEvent_t, so arrays move between programs on
// either API. $CDEVICE_CUDA_API=runtime or =driver uses that API alone;
// without it, a variable naming one API's library leaves the other out.
// Like cudaSetDevice, a call leaves the GPU's primary context current on
// its OS thread. Nothing is loaded before Backend.Probe.
package cuda

import (
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// EnvLibrary names the environment variable with the path of the libcudart
// to load. When set, no other library is tried (nor the driver API, unless
// EnvDriverLibrary is set too), so a wrong path is reported instead of
// silently loading another runtime.
const EnvLibrary = "CDEVICE_CUDA_LIBRARY"

// Backend is CUDA, through the runtime or the driver API (see the package
// doc); it registers itself with package device, and its probe registers
// the devices it finds. Its Probe returns, even with an error, the
// Info.Library and Info.Version of a library it did load.
var Backend device.Backend = gpurt.Register(table.Source(platformCandidates), driverTable.Source(driverCandidates))

// Values from CUDA's driver_types.h and cuda_runtime_api.h.
const (
	memAttachGlobal     = 1  // cudaMemAttachGlobal
	attrComputeCapMajor = 75 // cudaDevAttrComputeCapabilityMajor
	attrComputeCapMinor = 76 // cudaDevAttrComputeCapabilityMinor
	attrConcurrentMgd   = 89 // cudaDevAttrConcurrentManagedAccess
)

var table = gpurt.Table{
	Name: "cuda", Title: "CUDA", Driver: "NVIDIA driver", EnvLibrary: EnvLibrary, EnvAPI: EnvAPI,
	Prefix: "cuda",
	Symbols: map[gpurt.Op][]string{
		// CUDA 12 headers map cudaGetDeviceProperties to _v2.
		gpurt.GetDeviceProperties: {"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"},
	},
	// cudaMemcpyBatchAsync came with CUDA 12.8; CUDA 13 dropped its
	// failIdx argument.
	Optional: []gpurt.Op{gpurt.MemcpyBatchAsync}, BatchFailIdxBefore: 13000,
	Kinds: []gpurt.Kind{
		{Memory: gpurt.DeviceMemory, Type: abi.DeviceCUDA, Alloc: "cudaMalloc", Free: "cudaFree"},
		{Memory: gpurt.HostMemory, Type: abi.DeviceCUDAHost, Alloc: "cudaMallocHost", Free: "cudaFreeHost"},
		{Memory: gpurt.ManagedMemory, Type: abi.DeviceCUDAManaged, Alloc: "cudaMallocManaged", Free: "cudaFree",
			AllocArgs: []uintptr{memAttachGlobal}},
	},
	Attributes:            []int{attrComputeCapMajor, attrComputeCapMinor, attrConcurrentMgd},
	ConcurrentManagedAttr: attrConcurrentMgd,
	// cudaMemcpyKind; cudaStreamNonBlocking, cudaEventDisableTiming.
	Memcpy:            gpurt.MemcpyKinds{HostToDevice: 1, DeviceToHost: 2, DeviceToDevice: 3, Default: 4},
	StreamNonBlocking: 1, EventDisableTiming: 2,
	// cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary.
	Codes: gpurt.Codes{NoDevice: 100, InsufficientDriver: 35, StubLibrary: 34, NotReady: 600},
	// 1000*major + 10*minor.
	FormatVersion: func(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) },
	Wrap:          func(d *gpurt.Device) device.Device { return &Device{dev: d} },
}

//go:generate go run ../../internal/gpurt/gpurtgen -o device_gen.go

// A Device is one kind of memory of one CUDA device (GPU): device memory
// (abi.DeviceCUDA, cudaMalloc and cudaFree), pinned host memory
// (abi.DeviceCUDAHost, cudaMallocHost and cudaFreeHost) or managed memory
// (abi.DeviceCUDAManaged, cudaMallocManaged with cudaMemAttachGlobal, and
// cudaFree). Backend's probe makes them; the Devices of one GPU share its
// streams. A Device implements device.Device and device.ForeignStreams.
// Every call makes the GPU current (cudaSetDevice) on a locked OS thread
// first, so a Device may be used from any goroutine. Through the driver API
// the calls are the driver's (cuMemAlloc_v2, cuMemAllocHost_v2,
// cuMemAllocManaged, cuMemcpyHtoDAsync_v2, cuCtxSetCurrent of the GPU's
// primary context); the behaviour is the same.
//
// Copies are asynchronous on the stream (nil: the GPU's default stream).
// Go memory given to a copy must stay reachable and untouched until that
// stream or a later-recorded event is synchronized; a caller that drops its
// last reference before then must pin it (runtime.Pinner) until the sync.
//
// The error of a failed runtime call wraps a *device.RuntimeError with the
// runtime's code and message (see ErrorName); bad arguments wrap
// device.ErrInvalid, streams and events used after Close device.ErrReleased.
type Device struct{ dev *gpurt.Device }

// ComputeCapability is the GPU's compute capability, e.g. 9, 0 for sm_90
// (cudaDevAttrComputeCapabilityMajor and Minor, read at probe).
func (d *Device) ComputeCapability() (major, minor int) {
	return d.dev.Attribute(attrComputeCapMajor), d.dev.Attribute(attrComputeCapMinor)
}
