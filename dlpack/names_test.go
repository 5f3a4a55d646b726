package dlpack_test

import (
	"testing"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
)

func TestTypeNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{dlpack.Device{DeviceType: abi.DeviceCUDAManaged}.DeviceType.String(), "cuda_managed"},
		{dlpack.DataType{Code: dlpack.CodeFloat, Bits: 16, Lanes: 1}.String(), "float16"},
		{dlpack.DataType{Code: dlpack.CodeInt, Bits: 32, Lanes: 4}.String(), "int32x4"},
		{dlpack.DataTypeCode(99).String(), "code(99)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	// DLPack's device types beyond Arrow's are not valid Arrow device types.
	for _, dt := range []dlpack.DeviceType{dlpack.DeviceMAIA, dlpack.DeviceTrn} {
		if dt.Valid() {
			t.Errorf("%d is a valid Arrow device type", int32(dt))
		}
	}
}
