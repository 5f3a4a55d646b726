package dlpack_test

import (
	"testing"

	"github.com/purearrow/cdevice/dlpack"
)

func TestTypeNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{dlpack.DeviceCUDAManaged.String(), "cuda_managed"},
		{dlpack.DeviceTrn.String(), "trn"},
		{dlpack.DeviceType(5).String(), "device(5)"},
		{dlpack.DataType{Code: dlpack.CodeFloat, Bits: 16, Lanes: 1}.String(), "float16"},
		{dlpack.DataType{Code: dlpack.CodeInt, Bits: 32, Lanes: 4}.String(), "int32x4"},
		{dlpack.DataTypeCode(99).String(), "code(99)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	for dt := dlpack.DeviceType(0); dt < 20; dt++ {
		a, ok := dt.Arrow()
		if ok != (dt >= 1 && dt <= 16 && dt != 5 && dt != 6) || ok && int32(a) != int32(dt) {
			t.Errorf("%v.Arrow() = %v, %v", dt, a, ok)
		}
	}
}
