//go:build linux || darwin

package cai_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Strides whose span overflows int64 (in the data or in a mask, which is
// always copied), and a broadcast (stride 0) claiming more elements than
// the memory holds: refused with a sentinel before anything is read or
// allocated. They read 2^63 bytes below the data (a crash beyond recover),
// panicked in make, or would have allocated past the machine.
func TestImportOverflows(t *testing.T) {
	m := testsupport.Guarded(t)
	data := cai.Data{Ptr: m.StoreAddr(0)}
	for _, c := range []struct {
		name string
		d    *cai.Interface
		want error
	}{
		{"data span past int64", &cai.Interface{Shape: []int64{2, 2}, Typestr: "<i8", Strides: []int64{math.MaxInt64, math.MinInt64}}, cdevice.ErrInvalid},
		{"data span of 2^63", &cai.Interface{Shape: []int64{2, 2}, Typestr: "|i1", Strides: []int64{1 << 62, -(1 << 62)}}, cdevice.ErrInvalid},
		{"mask span of 2^63", &cai.Interface{Shape: []int64{2, 2}, Typestr: "|i1",
			Mask: &cai.Interface{Shape: []int64{2, 2}, Typestr: "|b1", Strides: []int64{1 << 62, -(1 << 62)}}}, cdevice.ErrInvalid},
		{"a broadcast of 2^50 elements", &cai.Interface{Shape: []int64{1 << 50}, Typestr: "|i1", Strides: []int64{0}}, cdevice.ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.d.Version, c.d.Data = cai.Version, data
			if c.d.Mask != nil {
				c.d.Mask.Version, c.d.Mask.Data = cai.Version, data
			}
			var err error
			testsupport.NoPanic(t, "Import", func() {
				var da *cdevice.DeviceArray
				if da, err = cai.Import(context.Background(), c.d, cai.WithDevice(fzDev), cai.WithAllowCopy()); err == nil {
					err = fmt.Errorf("imported %v", da.Type)
					da.Release()
				}
			})
			if !errors.Is(err, c.want) {
				t.Errorf("Import: %v, want %v", err, c.want)
			}
		})
	}
}
