package device_test

import (
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// Allocate device memory, copy into it and back.
func Example() {
	dev := device.CPU // any device.Device works the same way
	p, err := dev.Alloc(4)
	if err != nil {
		panic(err)
	}
	defer dev.Free(p)
	s, _ := dev.NewStream()
	defer s.Close()
	dev.CopyToDevice(p, 0, []byte("abcd"), s)
	back := make([]byte, 4)
	dev.CopyToHost(back, p, 0, s)
	s.Synchronize() // copies are asynchronous on s until synchronized
	fmt.Println(string(back))
	// Output: abcd
}

// Find the backend that owns memory of an imported array.
func ExampleLookup() {
	d, err := device.Lookup(abi.DeviceCPU, -1)
	fmt.Println(d.Name(), err)
	_, err = device.Lookup(abi.DeviceMetal, 0)
	fmt.Println(err != nil)
	// Output:
	// cpu <nil>
	// true
}
