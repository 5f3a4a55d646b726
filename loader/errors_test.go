package loader_test

import (
	"context"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/loader"
)

// TestErrorPaths drives Discover, Default and ParseDeviceSpec into every
// failure and checks that each error wraps its path's documented sentinel,
// as must the reason of every backend that Discover reports failed.
func TestErrorPaths(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	cases := []testsupport.ErrorCase{
		// First: once discovery has run, a canceled ctx gets its report.
		testsupport.Case("Discover/canceled", context.Canceled, func(t *testing.T) error {
			_, err := loader.Discover(canceled)
			if err == nil {
				t.Skip("discovery already ran")
			}
			return err
		}),
		testsupport.Case("Default/canceled", context.Canceled, func(t *testing.T) error {
			t.Setenv(loader.EnvDevice, "")
			_, _, err := loader.Default(canceled)
			if err == nil {
				t.Skip("discovery already ran")
			}
			return err
		}),
		testsupport.Case("ParseDeviceSpec/unknown type", loader.ErrBadDeviceSpec, func(t *testing.T) error {
			_, _, err := loader.ParseDeviceSpec("quantum:0")
			return err
		}),
		testsupport.Case("ParseDeviceSpec/cpu with an id", loader.ErrBadDeviceSpec, func(t *testing.T) error {
			_, _, err := loader.ParseDeviceSpec("cpu:0")
			return err
		}),
		testsupport.Case("ParseDeviceSpec/negative id", loader.ErrBadDeviceSpec, func(t *testing.T) error {
			_, _, err := loader.ParseDeviceSpec("cuda:-1")
			return err
		}),
		testsupport.Case("ParseDeviceSpec/empty", loader.ErrBadDeviceSpec, func(t *testing.T) error {
			_, _, err := loader.ParseDeviceSpec("")
			return err
		}),
		testsupport.Case("Default/bad spec", loader.ErrBadDeviceSpec, func(t *testing.T) error {
			t.Setenv(loader.EnvDevice, "cuda:x")
			_, _, err := loader.Default(ctx)
			return err
		}),
		testsupport.Case("Default/no backend for the type", loader.ErrUnavailable, func(t *testing.T) error {
			t.Setenv(loader.EnvDevice, "vulkan:0")
			_, _, err := loader.Default(ctx)
			return err
		}),
		testsupport.Case("Default/no such id", loader.ErrUnavailable, func(t *testing.T) error {
			t.Setenv(loader.EnvDevice, "opencl:4096")
			_, _, err := loader.Default(ctx)
			return err
		}),
	}
	testsupport.RunErrorCases(t, cases)

	r, err := loader.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Backends {
		if b.Err != nil {
			testsupport.WantDocumented(t, b.Name+" probe", b.Err)
		}
	}
}
