package device

import (
	"fmt"
	"slices"
	"sync"

	"github.com/purearrow/cdevice/abi"
)

var registry struct {
	mu       sync.RWMutex
	backends []Backend
	devices  map[key]Device
}

type key struct {
	t  abi.DeviceType
	id int64
}

// RegisterBackend adds a backend; backends call it from init. Nothing is
// loaded until the backend is probed.
func RegisterBackend(b Backend) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.backends = append(registry.backends, b)
}

// Backends returns the registered backends in registration order.
func Backends() []Backend {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return slices.Clone(registry.backends)
}

// Register makes d the device that Lookup returns for its type and id.
// Backends register the devices their probe found; CPU is always there.
func Register(d Device) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.devices == nil {
		registry.devices = map[key]Device{}
	}
	registry.devices[key{d.Type(), d.ID()}] = d
}

// Lookup returns the device that owns memory of type t and id, so an
// imported array can be read and freed. The CPU device answers to any id.
func Lookup(t abi.DeviceType, id int64) (Device, error) {
	if t == abi.DeviceCPU {
		return CPU, nil
	}
	registry.mu.RLock()
	d, ok := registry.devices[key{t, id}]
	registry.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s:%d (is its backend loaded? see loader.Discover)", ErrUnknownDevice, t, id)
	}
	return d, nil
}
