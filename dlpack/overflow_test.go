//go:build linux || darwin

package dlpack_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Strides and byte offsets whose products or span overflow int64, and
// shapes that claim more elements than the memory holds (a broadcast of
// stride 0): refused with a sentinel before anything is read or allocated,
// the deleter called once. They read far outside the producer's memory
// (a crash beyond recover), panicked in make, allocated past the machine,
// or gave wrong values.
func TestImportOverflows(t *testing.T) {
	i8 := dlpack.DataType{Code: dlpack.CodeInt, Bits: 8, Lanes: 1}
	i64 := dlpack.DataType{Code: dlpack.CodeInt, Bits: 64, Lanes: 1}
	for _, c := range []struct {
		name    string
		dtype   dlpack.DataType
		shape   []int64
		strides []int64
		offset  uint64
		want    error
	}{
		{"span past int64 (hi - lo)", i64, []int64{2, 2}, []int64{13 << 59, -3 << 59}, 0, cdevice.ErrInvalid},
		{"span and offset past int64", i8, []int64{2, 2}, []int64{1<<62 + 1, -(1<<62 - 1)}, 1<<62 - 1, cdevice.ErrInvalid},
		{"strides in bytes past int64", i64, []int64{2, 2}, []int64{1 << 62, -(1 << 62)}, 0, cdevice.ErrInvalid},
		{"a broadcast of 2^50 elements", i8, []int64{1 << 50}, []int64{0}, 0, cdevice.ErrUnsupported},
		{"offset plus size past int64", i8, []int64{math.MaxInt64 - 10}, nil, 1<<62 - 1, cdevice.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testsupport.Guarded(t)
			fzMu.Lock()
			clear(fzDeleted)
			fzMu.Unlock()
			v := (*dlpack.ManagedTensorVersioned)(m.Alloc(int(unsafe.Sizeof(dlpack.ManagedTensorVersioned{}))))
			v.Version = dlpack.PackVersion{Major: dlpack.MajorVersion}
			v.Deleter = fzDeleter1.Ptr()
			tt := &v.DLTensor
			tt.Device = dlpack.Device{DeviceType: abi.DeviceCPU}
			tt.Dtype, tt.ByteOffset, tt.Ndim = c.dtype, c.offset, int32(len(c.shape))
			shape := m.Int64s(len(c.shape))
			copy(shape, c.shape)
			tt.Shape = uintptr(unsafe.Pointer(&shape[0]))
			if c.strides != nil {
				strides := m.Int64s(len(c.strides))
				copy(strides, c.strides)
				tt.Strides = uintptr(unsafe.Pointer(&strides[0]))
			}
			tt.Data = m.StoreAddr(0)
			var err error
			testsupport.NoPanic(t, "import", func() {
				var da *cdevice.DeviceArray
				if da, err = dlpack.Import(context.Background(), v, dlpack.WithAllowCopy()); err == nil {
					err = fmt.Errorf("imported %v", da.Type)
					da.Release()
				}
			})
			if !errors.Is(err, c.want) {
				t.Errorf("Import: %v, want %v", err, c.want)
			}
			if n := fzDeletes(v.Addr()); n != 1 {
				t.Errorf("deleter called %d times, want 1", n)
			}
		})
	}
}
