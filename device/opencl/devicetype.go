package opencl

// IsCPU reports whether the device is a CL_DEVICE_TYPE_CPU device: OpenCL
// run on the host's own processors (PoCL's pthread device, for one). Its
// copies go through the OpenCL runtime at a fraction of the speed of the
// CPU device's, so the loader does not make it the default on its own.
func (d *Device) IsCPU() bool { return d.clType&clDeviceTypeCPU != 0 }
