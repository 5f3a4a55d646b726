// Package loader finds out which device runtimes this machine can run, why
// the others cannot, and which device to use by default.
//
// Importing loader imports every backend (device/cuda, device/hip,
// device/opencl); each registers itself with the device package. The loader
// knows backends only through device.Backends(), so adding a backend is one
// blank import here and touches no other backend.
//
// Nothing is loaded until the first Discover (or Default). Discovery probes
// every registered backend once per process, one after another, timing each
// probe; the report is cached and every later call returns it.
//
// # Default device
//
// The environment variable CDEVICE_DEVICE picks a device explicitly; its
// syntax is ParseDeviceSpec's: cuda:N, cuda_host:N, cuda_managed:N, hip:N
// (or rocm:N), hip_host:N (rocm_host:N), opencl:N, or cpu. A malformed value
// is an error wrapping ErrBadDeviceSpec; a device that is not available is an
// error wrapping ErrUnavailable and the backend's own error.
//
// Without it the default is the first GPU-class device, CUDA before HIP
// (then any other GPU-class type a new backend brings: Metal, Vulkan,
// oneAPI, WebGPU), then the first OpenCL accelerator. Neither host-memory
// device types (CUDA_HOST, CUDA_MANAGED, ROCM_HOST) nor devices that run
// on the host's own processors (an IsCPU method says so: OpenCL devices of
// type CL_DEVICE_TYPE_CPU, PoCL's say, and HIP devices of chipStar on such
// an OpenCL device), whose copies run at a fraction of the CPU device's
// speed, are picked automatically; CDEVICE_DEVICE still names them. With none of these the
// default is device.CPU, and the reason says what each backend reported.
package loader
