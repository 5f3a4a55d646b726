package opencl

import "github.com/purearrow/cdevice/device"

// NewBackendForTest is a backend of its own (its own probe, devices not
// registered) so that tests leave the global Backend's cached probe alone.
// names nil: the usual search ($CDEVICE_OPENCL_LIBRARY, then the defaults);
// noSVM forces cl_mem buffers.
func NewBackendForTest(names []string, noSVM bool) device.Backend {
	b := newBackend(names)
	b.noSVM = noSVM
	b.register = false
	return b
}
