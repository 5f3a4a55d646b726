package hip

import (
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// EnvLibrary names the environment variable that overrides the library path.
const EnvLibrary = "CDEVICE_HIP_LIBRARY"

// Backend is the HIP runtime. Its Probe returns, even with an error, the
// Info.Library and Info.Version of a library it did load.
var Backend device.Backend = gpurt.Register(table.Source(platformCandidates))

// hipHostAllocDefault is hipExtHostAlloc's (and hipHostMalloc's) default flags.
const hipHostAllocDefault = 0

// Values from hip/hip_runtime_api.h and hip/driver_types.h: CUDA's.
var table = gpurt.Table{
	Name: "hip", Title: "HIP", Driver: "AMD GPU driver (amdgpu)", EnvLibrary: EnvLibrary,
	Prefix: "hip",
	Symbols: map[gpurt.Op][]string{
		// HIP 6 headers map hipGetDeviceProperties to R0600, a new layout
		// that also starts with name[256]; HIP 5 has only the old one.
		gpurt.GetDeviceProperties: {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"},
		gpurt.DeviceGetAttribute:  nil, // no attributes are read
	},
	// hipMemcpyBatchAsync came with ROCm 7, with CUDA 12.8's arguments.
	Optional: []gpurt.Op{gpurt.MemcpyBatchAsync},
	Kinds: []gpurt.Kind{
		{Memory: gpurt.DeviceMemory, Type: abi.DeviceROCm, Alloc: "hipMalloc", Free: "hipFree"},
		// ROCm 6.2 deprecates hipHostMalloc and hipHostFree for
		// hipExtHostAlloc and hipFreeHost: the new names first, the old
		// where a runtime lacks them; a runtime with neither loses only
		// pinned host memory.
		{Memory: gpurt.HostMemory, Type: abi.DeviceROCmHost, Alloc: "hipExtHostAlloc", Free: "hipFreeHost",
			OlderAlloc: []string{"hipHostMalloc"}, OlderFree: []string{"hipHostFree"},
			AllocArgs: []uintptr{hipHostAllocDefault}, Optional: true},
	},
	// hipMemcpyKind; hipStreamNonBlocking, hipEventDisableTiming.
	Memcpy:            gpurt.MemcpyKinds{HostToDevice: 1, DeviceToHost: 2, DeviceToDevice: 3, Default: 4},
	StreamNonBlocking: 1, EventDisableTiming: 2,
	// hipErrorNoDevice, hipErrorInsufficientDriver (the kernel driver,
	// amdgpu/KFD, is older than the runtime needs); HIP has no stub library.
	Codes: gpurt.Codes{NoDevice: 100, InsufficientDriver: 35, NotReady: 600},
	// hipDriverGetVersion answers a constant of the HIP build, not the
	// amdgpu driver's version.
	DriverVersionIsRuntime: true,
	HostCPU:                hostCPU,
	FormatVersion:          formatVersion,
	Wrap:                   func(d *gpurt.Device) device.Device { return &Device{dev: d} },
}

// formatVersion writes HIP's major*10000000 + minor*100000 + patch.
func formatVersion(v int) string {
	if v < 10000000 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000)
}

//go:generate go run ../../internal/gpurt/gpurtgen -o device_gen.go

// A Device is one kind of memory of one HIP GPU: device memory
// (abi.DeviceROCm, hipMalloc and hipFree) or pinned host memory
// (abi.DeviceROCmHost, hipExtHostAlloc and hipFreeHost, or before ROCm 6.2
// hipHostMalloc and hipHostFree). Backend's probe makes
// them; the Devices of one GPU share its streams. A Device implements
// device.Device and device.ForeignStreams. Every call makes the GPU current
// (hipSetDevice) on a locked OS thread first, so a Device may be used from
// any goroutine.
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
