// Package cuda is the CUDA backend: libcudart loaded at run time through
// internal/ffi, no cgo and no CUDA toolkit needed to build. The binding and
// the Device, Stream and Event implementation are internal/gpurt's, shared
// with package hip; this package holds what is CUDA's own: where the
// library is, the table of its names and constants, and compute capability.
//
// Each CUDA device ordinal n gives three devices: cuda:n (cudaMalloc),
// cuda_host:n (cudaMallocHost, pinned host memory) and cuda_managed:n
// (cudaMallocManaged). The sync_event of their arrays is a cudaEvent_t*.
// A nil stream is a non-blocking stream of the device made at probe.
// Devices are device.ForeignStreams: a cudaStream_t of the same GPU that
// other code made waits for our events, and our streams for it.
//
// The library is found, in order: the path in $CDEVICE_CUDA_LIBRARY (alone
// when set), then the sonames of CUDA 13, 12 and 11 and $CUDA_PATH (see
// candidates_*.go). Nothing is loaded before Backend.Probe.
package cuda

import (
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// EnvLibrary names the environment variable with the path of the libcudart
// to load. When set, no other library is tried, so a wrong path is reported
// instead of silently loading another runtime.
const EnvLibrary = "CDEVICE_CUDA_LIBRARY"

// Backend is the CUDA runtime; it registers itself with package device, and
// its probe registers the devices it finds. Its Probe returns, even with an
// error, the Info.Library and Info.Version of a library it did load.
var Backend device.Backend = gpurt.Register(&table, platformCandidates)

// Values from CUDA's driver_types.h and cuda_runtime_api.h.
const (
	memAttachGlobal     = 1  // cudaMemAttachGlobal
	attrComputeCapMajor = 75 // cudaDevAttrComputeCapabilityMajor
	attrComputeCapMinor = 76 // cudaDevAttrComputeCapabilityMinor
)

var table = gpurt.Table{
	Name: "cuda", Title: "CUDA", Driver: "NVIDIA driver", EnvLibrary: EnvLibrary,
	Prefix: "cuda",
	Symbols: map[gpurt.Op][]string{
		// CUDA 12 headers map cudaGetDeviceProperties to _v2.
		gpurt.GetDeviceProperties: {"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"},
	},
	Kinds: []gpurt.Kind{
		{Memory: gpurt.DeviceMemory, Type: abi.DeviceCUDA, Alloc: "cudaMalloc", Free: "cudaFree"},
		{Memory: gpurt.HostMemory, Type: abi.DeviceCUDAHost, Alloc: "cudaMallocHost", Free: "cudaFreeHost"},
		{Memory: gpurt.ManagedMemory, Type: abi.DeviceCUDAManaged, Alloc: "cudaMallocManaged", Free: "cudaFree",
			AllocArgs: []uintptr{memAttachGlobal}},
	},
	Attributes: []int{attrComputeCapMajor, attrComputeCapMinor},
	// cudaMemcpyKind; cudaStreamNonBlocking, cudaEventDisableTiming.
	Memcpy:            gpurt.MemcpyKinds{HostToDevice: 1, DeviceToHost: 2, DeviceToDevice: 3, Default: 4},
	StreamNonBlocking: 1, EventDisableTiming: 2,
	// cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary.
	Codes: gpurt.Codes{NoDevice: 100, InsufficientDriver: 35, StubLibrary: 34, NotReady: 600},
	// 1000*major + 10*minor.
	FormatVersion: func(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) },
	Wrap:          func(d *gpurt.Device) device.Device { return &Device{d} },
}

// A Device is one kind of memory of one CUDA device: device memory
// (abi.DeviceCUDA), pinned host memory (abi.DeviceCUDAHost) or managed
// memory (abi.DeviceCUDAManaged). It implements device.Device, and has
// Kind (the memory kind), Ordinal (what cudaSetDevice takes) and ErrorName
// (the runtime's name for an error code, e.g. "cudaErrorMemoryAllocation").
// Every call makes the device current on a locked OS thread first, so a
// Device may be used from any goroutine.
//
// Copies are asynchronous on the stream (nil: the device's default stream).
// Go memory given to a copy must stay reachable and untouched until that
// stream or a later-recorded event is synchronized; a caller that drops its
// last reference before then must pin it (runtime.Pinner) until the sync.
type Device struct{ *gpurt.Device }

// ComputeCapability is the device's compute capability, e.g. 9, 0 for sm_90.
func (d *Device) ComputeCapability() (major, minor int) {
	return d.Attribute(attrComputeCapMajor), d.Attribute(attrComputeCapMinor)
}
