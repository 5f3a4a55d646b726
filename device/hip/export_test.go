package hip

import "github.com/purearrow/cdevice/device"

// NewBackend returns an unprobed backend, so that a test can probe with its
// own environment (Backend itself probes once per process). It registers
// no devices.
func NewBackend() device.Backend { return newBackend(false) }

var HIPVersion = hipVersion
