package cuda

import "github.com/purearrow/cdevice/device"

// NewTestBackend is a fresh, unregistered backend that tries only paths.
func NewTestBackend(paths ...string) device.Backend {
	return newBackend(func() []string { return paths }, false)
}

// NewRegisteringTestBackend is NewTestBackend that registers its devices.
func NewRegisteringTestBackend(paths ...string) device.Backend {
	return newBackend(func() []string { return paths }, true)
}

// CloseBackend destroys a test backend's default streams.
func CloseBackend(b device.Backend) error { return b.(*backend).close() }

// Candidates is the library search list.
func Candidates() []string { return candidates() }

// DefaultStream is the cudaStream_t a nil stream stands for.
func DefaultStream(d *Device) uintptr { return d.g.stream }
