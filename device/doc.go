// Package device defines what cdevice needs of a device runtime (the Device,
// Stream and Event interfaces, after nanoarrow's small device vtable), the
// CPU device, and the registry that maps an ArrowDeviceArray's (device type,
// device id) to the backend that can read and free its memory.
//
// Backends (device/cuda, device/hip, device/opencl) register themselves; the
// loader package discovers which of them this machine can run.
package device
