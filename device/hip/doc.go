// Package hip is the HIP backend: AMD's HIP runtime of ROCm (libamdhip64)
// loaded at run time, no cgo and no ROCm needed to build. HIP copies the
// CUDA runtime API, and this package and package cuda share one
// implementation.
// Importing it registers Backend with the device package; nothing is loaded
// until Backend.Probe is first called.
//
// The library is looked up in this order: the path in the environment
// variable CDEVICE_HIP_LIBRARY (alone: an explicit choice that fails is
// reported, not silently replaced), then libamdhip64.so.7, .so.6, .so.5,
// .so (the dynamic loader's search), then $ROCM_PATH/lib/libamdhip64.so*
// and /opt/rocm/lib/libamdhip64.so*. On Windows: %HIP_PATH%\bin, then
// amdhip64_7.dll, amdhip64_6.dll and amdhip64.dll in the application's
// folder and PATH's absolute folders, never the current directory.
// $ROCM_PATH and %HIP_PATH% count only when absolute. Each library that loads is tried in turn: one whose runtime
// needs a newer driver than the machine has (hipErrorInsufficientDriver),
// or that lacks a function this package needs, is skipped for the next,
// and device.Info.Skipped says why.
//
// Each GPU n appears twice: as rocm:n (abi.DeviceROCm: hipMalloc, device
// memory) and as rocm_host:n (abi.DeviceROCmHost: hipExtHostAlloc, or
// hipHostMalloc before ROCm 6.2, pinned host memory that the host may read;
// a runtime with neither still serves device memory, and its rocm_host
// Alloc fails with device.ErrMissingSymbol); $CDEVICE_DEVICE also takes hip:n and
// hip_host:n.
// An ArrowDeviceArray's sync_event for these devices is a hipEvent_t*. A nil
// stream is a non-blocking stream of the GPU made at probe. Devices are
// device.ForeignStreams: a hipStream_t of the same GPU that other code made
// waits for our events, and our streams for it.
//
// HIP keeps the current device per OS thread, so every call sequence locks
// its goroutine to the thread and calls hipSetDevice first.
//
// Other HIP runtimes load too. chipStar (HIP on OpenCL) on PoCL gives a
// device on the host's own CPU: Device.IsCPU reports it (the probe asks
// chipStar's hipGetBackendNativeHandles and OpenCL's CL_DEVICE_TYPE), and
// the loader then never makes it the default. Where a runtime answers
// hipEventQuery on an event never recorded with hipErrorNotReady (chipStar
// does; HIP's header says hipSuccess), host waits that can be cancelled
// poll an event of their own instead (see docs/devices.md's chipStar table).
package hip
