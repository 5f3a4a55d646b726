package loader_test

import (
	"context"
	"fmt"

	"github.com/purearrow/cdevice/loader"
)

// Discover reports every backend: what it loaded, or why it could not.
func ExampleDiscover() {
	r, err := loader.Discover(context.Background())
	if err != nil {
		panic(err)
	}
	for _, b := range r.Backends {
		if b.Err != nil {
			fmt.Printf("%s: %s\n", b.Name, b.Reason)
			continue
		}
		fmt.Printf("%s: %s %s\n", b.Name, b.Library, b.Version)
		for _, d := range b.Devices {
			fmt.Printf("  %s %s, %d MiB\n", d.Spec(), d.Name, d.TotalMemory>>20)
		}
	}
}

// Default honours CDEVICE_DEVICE and otherwise picks a GPU, or the CPU with
// the reason why.
func ExampleDefault() {
	dev, why, err := loader.Default(context.Background())
	if err != nil {
		panic(err) // a malformed or unavailable CDEVICE_DEVICE
	}
	fmt.Printf("using %s: %s\n", dev.Name(), why)
}

func ExampleParseDeviceSpec() {
	for _, s := range []string{"cuda:1", "hip:0", "rocm_host:0", "cpu", "gpu:0"} {
		t, id, err := loader.ParseDeviceSpec(s)
		fmt.Println(t, id, err)
	}
	// Output:
	// cuda 1 <nil>
	// rocm 0 <nil>
	// rocm_host 0 <nil>
	// cpu -1 <nil>
	// device(0) 0 loader: malformed device spec: "gpu:0": unknown device type "gpu" (want cpu, cuda:N, cuda_host:N, cuda_managed:N, hip:N, opencl:N, …)
}
