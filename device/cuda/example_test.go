package cuda_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
)

// Probe loads the runtime once and lists its devices, or says exactly why it
// cannot: every failure wraps one of the device package's sentinels.
func Example() {
	info, err := cuda.Backend.Probe(context.Background())
	switch {
	case err == nil:
		for _, d := range info.Devices {
			_ = d // registered with device.Register: device.Lookup finds it
		}
		fmt.Println("cuda: devices found")
	case errors.Is(err, device.ErrNotFound), errors.Is(err, device.ErrNoDevice),
		errors.Is(err, device.ErrMissingSymbol), errors.Is(err, device.ErrRuntime):
		fmt.Println("cuda: unavailable, and the error says why")
	}
}

// The backend registers itself when the package is imported; nothing is
// loaded until it is probed.
func ExampleBackend() {
	for _, b := range device.Backends() {
		if b == cuda.Backend {
			fmt.Println(b.Name(), "is registered")
		}
	}
	// Output: cuda is registered
}
