package abi_test

import (
	"fmt"

	"github.com/purearrow/cdevice/abi"
)

// Device types print as DLPack/Arrow names.
func ExampleDeviceType() {
	fmt.Println(abi.DeviceCUDA, abi.DeviceOpenCL, abi.DeviceType(5), abi.DeviceType(5).Valid())
	// Output: cuda opencl device(5) false
}
