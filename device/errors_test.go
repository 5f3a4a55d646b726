package device_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestErrorPaths drives the registry and the CPU device into every failure
// and checks that each error wraps its path's documented sentinel. (The
// GPU backends have their own, in their packages.)
func TestErrorPaths(t *testing.T) {
	testsupport.RunErrorCases(t, []testsupport.ErrorCase{
		testsupport.Case("Lookup/no backend", device.ErrUnknownDevice, func(t *testing.T) error {
			_, err := device.Lookup(abi.DeviceMetal, 0)
			return err
		}),
		testsupport.Case("Lookup/unknown device type", device.ErrUnknownDevice, func(t *testing.T) error {
			_, err := device.Lookup(abi.DeviceType(99), 0)
			return err
		}),
		testsupport.Case("CPU.Alloc/size 0", device.ErrInvalid, func(t *testing.T) error {
			_, err := device.CPU.Alloc(0)
			return err
		}),
		testsupport.Case("CPU.Alloc/negative size", device.ErrInvalid, func(t *testing.T) error {
			_, err := device.CPU.Alloc(-1)
			return err
		}),
		testsupport.Case("CPU.Free/not allocated", device.ErrInvalid, func(t *testing.T) error {
			b := make([]byte, 8)
			return device.CPU.Free(device.Pointer(unsafe.Pointer(&b[0])))
		}),
		testsupport.Case("CPU.Free/twice", device.ErrInvalid, func(t *testing.T) error {
			p, err := device.CPU.Alloc(8)
			if err != nil {
				t.Fatal(err)
			}
			if err := device.CPU.Free(p); err != nil {
				t.Fatal(err)
			}
			return device.CPU.Free(p)
		}),
		testsupport.Case("CPU.WaitSyncEvent/non-NULL event", device.ErrInvalid, func(t *testing.T) error {
			return device.CPU.WaitSyncEvent(context.Background(), 8, nil)
		}),
	})
	testsupport.WantError(t, "RuntimeError", &device.RuntimeError{Runtime: "cuda", Call: "cudaMalloc", Code: 2}, device.ErrRuntime)
}
