package dlpack_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
)

// buildJSON makes an array of dt from JSON; released when the test ends.
func buildJSON(t *testing.T, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	must(t, err)
	t.Cleanup(a.Release)
	return a
}

// otherExtension is an extension type that is not a tensor.
type otherExtension struct{ arrow.ExtensionBase }

func (*otherExtension) ExtensionName() string { return "example.other" }
func (*otherExtension) Serialize() string     { return "" }
func (*otherExtension) ArrayType() reflect.Type {
	return reflect.TypeOf(otherArray{})
}
func (o *otherExtension) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return o, nil
}
func (o *otherExtension) ExtensionEquals(x arrow.ExtensionType) bool {
	return x.ExtensionName() == o.ExtensionName()
}

// TestExportRefusals: every Arrow type that is not a tensor, and arrays with
// nulls, are refused with an error saying why; nothing is left behind.
func TestExportRefusals(t *testing.T) {
	dict := func(t *testing.T) arrow.Array {
		b := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String})
		defer b.Release()
		must(t, b.(*array.BinaryDictionaryBuilder).AppendString("a"))
		must(t, b.(*array.BinaryDictionaryBuilder).AppendString("b"))
		a := b.NewArray()
		t.Cleanup(a.Release)
		return a
	}
	other := func(t *testing.T) arrow.Array {
		st := buildJSON(t, arrow.BinaryTypes.String, `["a", null]`)
		a := array.NewExtensionArrayWithStorage(&otherExtension{arrow.ExtensionBase{Storage: arrow.BinaryTypes.String}}, st)
		t.Cleanup(a.Release)
		return a
	}
	cases := []struct {
		name string
		arr  func(t *testing.T) arrow.Array
		is   error
	}{
		{"string", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.BinaryTypes.String, `["a","bc"]`) }, cdevice.ErrUnsupported},
		{"binary", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.BinaryTypes.Binary, `["YQ=="]`) }, cdevice.ErrUnsupported},
		{"list", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1,2],[3]]`)
		}, cdevice.ErrUnsupported},
		{"nested-list", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), `[[[1],[2,3]]]`)
		}, cdevice.ErrUnsupported},
		{"fixed_size_list<list>", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.FixedSizeListOf(1, arrow.ListOf(arrow.PrimitiveTypes.Int32)), `[[[1]]]`)
		}, cdevice.ErrUnsupported},
		{"fixed_size_list<string>", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.FixedSizeListOf(2, arrow.BinaryTypes.String), `[["a","b"]]`)
		}, cdevice.ErrUnsupported},
		{"struct", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), `[{"a":1}]`)
		}, cdevice.ErrUnsupported},
		{"dictionary", dict, cdevice.ErrUnsupported},
		{"date32", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.FixedWidthTypes.Date32, `["2024-01-02"]`) }, cdevice.ErrUnsupported},
		{"timestamp", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.FixedWidthTypes.Timestamp_us, `[1700000000000000]`)
		}, cdevice.ErrUnsupported},
		{"decimal128", func(t *testing.T) arrow.Array {
			b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 10, Scale: 2})
			defer b.Release()
			b.Append(decimal128.FromI64(5))
			a := b.NewArray()
			t.Cleanup(a.Release)
			return a
		}, cdevice.ErrUnsupported},
		{"other-extension", other, cdevice.ErrUnsupported},
		{"null-type", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.Null, `[null]`) }, cdevice.ErrUnsupported},
		{"nulls", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.PrimitiveTypes.Int32, `[1,null,3]`) }, dlpack.ErrNulls},
		{"null-list", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), `[[1,2],null]`)
		}, dlpack.ErrNulls},
		{"null-in-list", func(t *testing.T) arrow.Array {
			return buildJSON(t, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), `[[1,2],[3,null]]`)
		}, dlpack.ErrNulls},
		{"null-bool", func(t *testing.T) arrow.Array { return buildJSON(t, arrow.FixedWidthTypes.Boolean, `[true,null]`) }, dlpack.ErrNulls},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			da := onDevice(t, c.arr(t), cpuDev)
			calls, leaks := dlpack.DeleterCalls(), cdevice.LiveLeaks()
			_, err := dlpack.Export(context.Background(), da)
			wantIs(t, err, c.is, cdevice.ErrUnsupported)
			_, err = dlpack.ExportLegacy(context.Background(), da, dlpack.WithStreamHandle(0))
			wantIs(t, err, c.is)
			if n, l := dlpack.DeleterCalls(), cdevice.LiveLeaks(); n != calls || l != leaks {
				t.Fatalf("a refused export left %v, %d deleter calls (before %v, %d)", l, n, leaks, calls)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		_, err := dlpack.Export(context.Background(), nil)
		wantIs(t, err, cdevice.ErrInvalid)
	})
	// Malformed trees from NewDeviceArray are errors, not crashes.
	t.Run("malformed", func(t *testing.T) {
		for _, a := range []cdevice.DeviceArray{
			{Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), Length: 1, Buffers: []cdevice.DeviceBuffer{{}}},
			{Type: arrow.PrimitiveTypes.Int32, Length: 1, Buffers: []cdevice.DeviceBuffer{{}}},
			{Type: arrow.PrimitiveTypes.Int32, Length: 4, Buffers: []cdevice.DeviceBuffer{{}, {Ptr: 0x1000, Size: 8}}},
			{Type: arrow.PrimitiveTypes.Int32, Length: 4, Buffers: []cdevice.DeviceBuffer{{}, {}}},
			{Type: arrow.PrimitiveTypes.Int32, Length: -1, Buffers: []cdevice.DeviceBuffer{{}, {}}},
		} {
			a.DeviceType, a.DeviceID, a.Device = abi.DeviceCPU, -1, device.CPU
			da := cdevice.NewDeviceArray(a, nil)
			_, err := dlpack.Export(context.Background(), da)
			da.Release()
			wantIs(t, err, cdevice.ErrInvalid)
		}
	})
	// Memory on a device without a loaded backend exports zero-copy (only
	// pointers are needed) but cannot be copied.
	t.Run("no-backend", func(t *testing.T) {
		released := 0
		da := cdevice.NewDeviceArray(cdevice.DeviceArray{Type: arrow.PrimitiveTypes.Float32, Length: 4,
			Buffers:    []cdevice.DeviceBuffer{{}, {Ptr: 0x10000, Size: 16}},
			DeviceType: abi.DeviceVulkan, DeviceID: 3}, func() { released++ })
		mt, err := dlpack.Export(context.Background(), da)
		must(t, err)
		if mt.DLTensor.Device != (dlpack.Device{DeviceType: abi.DeviceVulkan, DeviceID: 3}) || mt.DLTensor.Data != 0x10000 {
			t.Fatalf("tensor %+v", mt.DLTensor)
		}
		_, err = dlpack.Import(context.Background(), mt) // no Vulkan backend: the deleter is called
		wantIs(t, err, cdevice.ErrUnknownDevice)
		bools := cdevice.NewDeviceArray(cdevice.DeviceArray{Type: arrow.FixedWidthTypes.Boolean, Length: 4,
			Buffers:    []cdevice.DeviceBuffer{{}, {Ptr: 0x10000, Size: 1}},
			DeviceType: abi.DeviceVulkan, DeviceID: 3}, func() { released++ })
		_, err = dlpack.Export(context.Background(), bools)
		wantIs(t, err, cdevice.ErrUnknownDevice)
		bools.Release()
		da.Release()
		if released != 2 {
			t.Fatalf("released %d times", released)
		}
	})
}

// TestImportRefusals: tensors Import cannot take. Each is given back: its C
// deleter runs exactly once before Import returns.
func TestImportRefusals(t *testing.T) {
	c := loadC(t)
	base := spec{versioned: true, devType: abi.DeviceCPU, dtype: dtI32, shape: []int64{4, 6}, seed: 1}
	mod := func(f func(*spec)) spec {
		s := base
		s.shape = append([]int64(nil), base.shape...)
		f(&s)
		return s
	}
	cases := []struct {
		name string
		s    spec
		opts []dlpack.ImportOption
		is   []error
	}{
		{"transposed", mod(func(s *spec) { s.strides = []int64{1, 4} }), nil, []error{dlpack.ErrNotContiguous, cdevice.ErrUnsupported}},
		{"broadcast", mod(func(s *spec) { s.strides = []int64{0, 1} }), nil, []error{dlpack.ErrNotContiguous}},
		{"padded-rows", mod(func(s *spec) { s.strides = []int64{8, 1} }), nil, []error{dlpack.ErrNotContiguous}},
		{"misaligned", mod(func(s *spec) { s.offset = 2 }), nil, []error{dlpack.ErrNotContiguous}},
		{"vulkan", mod(func(s *spec) { s.devType = abi.DeviceVulkan }), nil, []error{cdevice.ErrUnknownDevice}},
		{"maia", mod(func(s *spec) { s.devType = dlpack.DeviceMAIA }), nil, []error{cdevice.ErrUnknownDevice}},
		{"trn", mod(func(s *spec) { s.devType = dlpack.DeviceTrn }), nil, []error{cdevice.ErrUnknownDevice}},
		{"device-99", mod(func(s *spec) { s.devType = 99 }), nil, []error{cdevice.ErrInvalid}},
		{"opencl-42", mod(func(s *spec) { s.devType, s.devID = abi.DeviceOpenCL, 42 }), nil, []error{cdevice.ErrUnknownDevice}},
		{"version-2", mod(func(s *spec) { s.major = 2 }), nil, []error{dlpack.ErrVersion, cdevice.ErrUnsupported}},
		{"lanes", mod(func(s *spec) { s.dtype.Lanes = 4 }), nil, []error{cdevice.ErrUnsupported}},
		{"bfloat16", mod(func(s *spec) { s.dtype = dlpack.DataType{Code: dlpack.CodeBfloat, Bits: 16, Lanes: 1} }), nil, []error{cdevice.ErrUnsupported}},
		{"complex64", mod(func(s *spec) { s.dtype = dlpack.DataType{Code: dlpack.CodeComplex, Bits: 64, Lanes: 1} }), nil, []error{cdevice.ErrUnsupported}},
		{"float8", mod(func(s *spec) { s.dtype = dlpack.DataType{Code: dlpack.CodeFloat8E4M3FN, Bits: 8, Lanes: 1} }), nil, []error{cdevice.ErrUnsupported}},
		{"int128", mod(func(s *spec) { s.dtype = dlpack.DataType{Code: dlpack.CodeInt, Bits: 128, Lanes: 1} }), nil, []error{cdevice.ErrUnsupported}},
		{"0-d", mod(func(s *spec) { s.shape = nil }), nil, []error{cdevice.ErrUnsupported}},
		{"negative-shape", mod(func(s *spec) { s.shape[1] = -6 }), nil, []error{cdevice.ErrInvalid}},
		{"type-mismatch", base, []dlpack.ImportOption{dlpack.WithType(arrow.FixedSizeListOf(6, arrow.PrimitiveTypes.Int64))}, []error{cdevice.ErrInvalid}},
		{"shape-mismatch", base, []dlpack.ImportOption{dlpack.WithType(arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Int32))}, []error{cdevice.ErrInvalid}},
		{"type-not-tensor", base, []dlpack.ImportOption{dlpack.WithType(arrow.BinaryTypes.String)}, []error{cdevice.ErrUnsupported}},
		{"boolean-from-ints", base, []dlpack.ImportOption{dlpack.WithType(arrow.FixedSizeListOf(6, arrow.FixedWidthTypes.Boolean))}, []error{cdevice.ErrInvalid}},
	}
	for _, cs := range cases {
		for _, versioned := range []bool{true, false} {
			if !versioned && cs.s.major != 0 {
				continue
			}
			name := cs.name + map[bool]string{true: "", false: "/legacy"}[versioned]
			t.Run(name, func(t *testing.T) {
				s := cs.s
				s.versioned = versioned
				calls, live := c.calls(), c.live()
				p := c.produce(s.params(t), 0, 0)
				if p == 0 {
					t.Fatal("dl_produce failed")
				}
				var err error
				if versioned {
					_, err = dlpack.Import(context.Background(), dlpack.ManagedTensorVersionedAt(p), cs.opts...)
				} else {
					_, err = dlpack.ImportLegacy(context.Background(), dlpack.ManagedTensorAt(p), cs.opts...)
				}
				wantIs(t, err, cs.is...)
				if d := s.devType; (d == dlpack.DeviceMAIA || d == dlpack.DeviceTrn) && !strings.Contains(err.Error(), cs.name) {
					t.Errorf("%v does not name the device type %s", err, cs.name)
				}
				if c.calls() != calls+1 || c.live() != live || c.doubles() != 0 {
					t.Fatalf("deleter calls %d, live %d (want 1, %d)", c.calls()-calls, c.live(), live)
				}
				if n := cdevice.LiveLeaks().ImportedTensors; n != 0 {
					t.Fatalf("imports %d", n)
				}
			})
		}
	}
	c.collect()
	t.Run("nil", func(t *testing.T) {
		_, err := dlpack.Import(context.Background(), nil)
		wantIs(t, err, cdevice.ErrInvalid)
		_, err = dlpack.ImportLegacy(context.Background(), nil)
		wantIs(t, err, cdevice.ErrInvalid)
	})
}

type otherArray struct{ array.ExtensionArrayBase }
