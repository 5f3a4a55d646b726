package cdevice

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// vext is an extension type over any storage, to check that extension
// arrays are validated as their storage.
type vext struct{ arrow.ExtensionBase }

func newVext(storage arrow.DataType) *vext { return &vext{arrow.ExtensionBase{Storage: storage}} }

func (*vext) ArrayType() reflect.Type { return reflect.TypeOf(vextArray{}) }
func (*vext) ExtensionName() string   { return "cdevice.validate_test" }
func (*vext) Serialize() string       { return "" }
func (e *vext) ExtensionEquals(o arrow.ExtensionType) bool {
	return arrow.TypeEqual(e.Storage, o.StorageType())
}
func (*vext) Deserialize(s arrow.DataType, _ string) (arrow.ExtensionType, error) {
	return newVext(s), nil
}

type vextArray struct{ array.ExtensionArrayBase }

// Hand-made buffers, in native byte order as arrow-go reads them.
func vbuf(b ...byte) *memory.Buffer { return memory.NewBufferBytes(b) }
func vstr(s string) *memory.Buffer  { return memory.NewBufferBytes([]byte(s)) }

func vints[T int8 | int16 | int32 | int64 | uint16](vs ...T) *memory.Buffer {
	var b []byte
	for _, v := range vs {
		b, _ = binary.Append(b, binary.NativeEndian, v)
	}
	return memory.NewBufferBytes(b)
}

// vbits is a validity bitmap with a 1 for each true.
func vbits(valid ...bool) *memory.Buffer {
	b := make([]byte, (len(valid)+7)/8)
	for i, v := range valid {
		if v {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return memory.NewBufferBytes(b)
}

// vview is a binary view header: inline when len(s) <= 12, else pointing at
// buffer idx, offset off (whose first four bytes should be s's prefix).
func vview(s string, idx, off int32) []byte {
	h := make([]byte, 16)
	binary.NativeEndian.PutUint32(h, uint32(len(s)))
	if len(s) <= 12 {
		copy(h[4:], s)
		return h
	}
	copy(h[4:8], s)
	binary.NativeEndian.PutUint32(h[8:], uint32(idx))
	binary.NativeEndian.PutUint32(h[12:], uint32(off))
	return h
}

func vnd(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls, off int) *array.Data {
	return array.NewData(dt, n, bufs, children, nulls, off)
}

// int32Child is a valid int32 array of length n.
func int32Child(n int) *array.Data {
	vs := make([]int32, n)
	return vnd(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, vints(vs...)}, nil, 0, 0)
}

// runValidate validates d directly and, when that passes, through an
// arrow-go array and ValidateFull too; both must agree and neither may panic.
// Corrupt data is never handed to arrow-go's constructors: they reinterpret
// short buffers past their allocation (checkptr, on under -race, says so).
func runValidate(t *testing.T, d arrow.ArrayData) error {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("validateData panicked: %v", r)
			}
		}()
		err = validateData(d, "array")
	}()
	if err != nil {
		return err
	}
	arr := array.MakeFromData(d)
	defer arr.Release()
	if err := ValidateFull(arr); err != nil {
		t.Errorf("ValidateFull = %v, validateData = nil", err)
	}
	return nil
}

func TestValidateCorrupt(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	str := arrow.BinaryTypes.String
	listOfInt := arrow.ListOf(i32)
	sparse := arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: i32}, {Name: "b", Type: i32}}, []arrow.UnionTypeCode{3, 7})
	dense := arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: i32}, {Name: "b", Type: i32}}, []arrow.UnionTypeCode{3, 7})
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str}
	dictU16 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: str}
	dict := vnd(str, 2, []*memory.Buffer{nil, vints[int32](0, 1, 2), vbuf('a', 'b')}, nil, 0, 0)
	withDict := func(dt arrow.DataType, idx *memory.Buffer, n int, d arrow.ArrayData) *array.Data {
		x := vnd(dt, n, []*memory.Buffer{nil, idx}, nil, 0, 0)
		if d != nil {
			x.SetDictionary(d)
		}
		return x
	}
	ree := arrow.RunEndEncodedOf(i32, str)
	reeData := func(n int, ends *array.Data, vals int) *array.Data {
		v := vnd(str, vals, []*memory.Buffer{nil, vints(make([]int32, vals+1)...), nil}, nil, 0, 0)
		return vnd(ree, n, []*memory.Buffer{nil}, []arrow.ArrayData{ends, v}, 0, 0)
	}
	ends := func(vs ...int32) *array.Data {
		return vnd(i32, len(vs), []*memory.Buffer{nil, vints(vs...)}, nil, 0, 0)
	}
	sview := arrow.BinaryTypes.StringView
	long := "abcdefghijklmnopq" // 17 bytes: out of line
	views := func(dt arrow.DataType, hdr []byte, data ...*memory.Buffer) *array.Data {
		return vnd(dt, len(hdr)/16, append([]*memory.Buffer{nil, vbuf(hdr...)}, data...), nil, 0, 0)
	}
	nested := arrow.DataType(i32)
	var deep arrow.ArrayData = int32Child(0)
	for range 70 {
		nested = arrow.ListOf(nested)
		deep = vnd(nested, 0, []*memory.Buffer{nil, nil}, []arrow.ArrayData{deep}, 0, 0)
	}
	opaque := newVext(str)

	cases := []struct {
		name string
		d    arrow.ArrayData
		want string // a fragment of the message: the right check fired
	}{
		{"string offsets decrease", vnd(str, 3, []*memory.Buffer{nil, vints[int32](0, 2, 1, 3), vstr("abc")}, nil, 0, 0), "offsets decrease at slot 1"},
		{"string offsets past data", vnd(str, 2, []*memory.Buffer{nil, vints[int32](0, 1, 9), vstr("abc")}, nil, 0, 0), "past the end of the data buffer"},
		{"empty string offset past data", vnd(str, 0, []*memory.Buffer{nil, vints[int32](153), nil}, nil, 0, 0), "the offset of an empty array, 153, is outside the data buffer (0)"},
		{"empty sliced binary offset negative", vnd(arrow.BinaryTypes.Binary, 0, []*memory.Buffer{nil, vints[int32](0, -4), vstr("ab")}, nil, 0, 1), "the offset of an empty array, -4"},
		{"empty list offset past child", vnd(listOfInt, 0, []*memory.Buffer{nil, vints[int32](7)}, []arrow.ArrayData{int32Child(4)}, 0, 0), "outside the child (4)"},
		{"string negative first offset", vnd(str, 2, []*memory.Buffer{nil, vints[int32](-1, 1, 2), vstr("abc")}, nil, 0, 0), "negative"},
		{"string offsets too short", vnd(str, 3, []*memory.Buffer{nil, vints[int32](0, 1), vstr("abc")}, nil, 0, 0), "offsets buffer has 8 bytes"},
		{"sliced string offsets decrease", vnd(str, 2, []*memory.Buffer{nil, vints[int32](0, 1, 3, 2), vstr("abc")}, nil, 0, 1), "offsets decrease at slot 1"},
		{"large string offsets decrease", vnd(arrow.BinaryTypes.LargeString, 2, []*memory.Buffer{nil, vints[int64](0, 3, 2), vstr("abc")}, nil, 0, 0), "offsets decrease"},
		{"string invalid UTF-8", vnd(str, 2, []*memory.Buffer{nil, vints[int32](0, 1, 3), vbuf('a', 0xc3, 0x28)}, nil, 0, 0), "invalid UTF-8 at slot 1"},
		{"large string invalid UTF-8", vnd(arrow.BinaryTypes.LargeString, 1, []*memory.Buffer{nil, vints[int64](0, 1), vbuf(0xff)}, nil, 0, 0), "invalid UTF-8"},
		{"list offsets past child", vnd(listOfInt, 2, []*memory.Buffer{nil, vints[int32](0, 2, 5)}, []arrow.ArrayData{int32Child(4)}, 0, 0), "past the end of the child (4)"},
		{"list offsets decrease", vnd(listOfInt, 2, []*memory.Buffer{nil, vints[int32](0, 3, 2)}, []arrow.ArrayData{int32Child(4)}, 0, 0), "offsets decrease"},
		{"map offsets past child", vnd(arrow.MapOf(i32, i32), 1, []*memory.Buffer{nil, vints[int32](0, 3)}, []arrow.ArrayData{
			vnd(arrow.MapOf(i32, i32).Elem(), 2, []*memory.Buffer{nil}, []arrow.ArrayData{int32Child(2), int32Child(2)}, 0, 0)}, 0, 0), "past the end of the entries (2)"},
		{"map keys with nulls", vnd(arrow.MapOf(i32, i32), 1, []*memory.Buffer{nil, vints[int32](0, 2)}, []arrow.ArrayData{
			vnd(arrow.MapOf(i32, i32).Elem(), 2, []*memory.Buffer{nil}, []arrow.ArrayData{
				vnd(i32, 2, []*memory.Buffer{vbits(true, false), vints[int32](1, 2)}, nil, 1, 0), int32Child(2)}, 0, 0)}, 0, 0), "keys (null count 1)"},
		{"list view negative offset", vnd(arrow.ListViewOf(i32), 2, []*memory.Buffer{nil, vints[int32](0, -1), vints[int32](1, 1)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "slot 1 has offset -1"},
		{"list view negative size", vnd(arrow.ListViewOf(i32), 1, []*memory.Buffer{nil, vints[int32](0), vints[int32](-2)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "size -2"},
		{"list view past child", vnd(arrow.ListViewOf(i32), 2, []*memory.Buffer{nil, vints[int32](0, 2), vints[int32](1, 2)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "outside the child of length 3"},
		{"large list view past child", vnd(arrow.LargeListViewOf(i32), 1, []*memory.Buffer{nil, vints[int64](1), vints[int64](1 << 62)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "outside the child"},
		{"sparse union undeclared type id", vnd(sparse, 2, []*memory.Buffer{nil, vints[int8](3, 4)}, []arrow.ArrayData{int32Child(2), int32Child(2)}, 0, 0), "type id 4 at slot 1"},
		{"sparse union negative type id", vnd(sparse, 1, []*memory.Buffer{nil, vints[int8](-3)}, []arrow.ArrayData{int32Child(1), int32Child(1)}, 0, 0), "type id -3"},
		{"sparse union child too short", vnd(sparse, 3, []*memory.Buffer{nil, vints[int8](3, 3, 7)}, []arrow.ArrayData{int32Child(3), int32Child(2)}, 0, 0), "child 1 has length 2"},
		{"dense union offset past child", vnd(dense, 2, []*memory.Buffer{nil, vints[int8](3, 7), vints[int32](0, 1)}, []arrow.ArrayData{int32Child(1), int32Child(1)}, 0, 0), "offset 1 at slot 1 is outside child 1"},
		{"dense union negative offset", vnd(dense, 1, []*memory.Buffer{nil, vints[int8](3), vints[int32](-1)}, []arrow.ArrayData{int32Child(1), int32Child(1)}, 0, 0), "offset -1"},
		{"union with nulls", vnd(sparse, 1, []*memory.Buffer{vbits(false), vints[int8](3)}, []arrow.ArrayData{int32Child(1), int32Child(1)}, 1, 0), "which its type does not allow"},
		{"dense union bad type id", vnd(dense, 1, []*memory.Buffer{nil, vints[int8](0), vints[int32](0)}, []arrow.ArrayData{int32Child(1), int32Child(1)}, 0, 0), "type id 0"},
		{"dictionary negative index", withDict(dictType, vints[int8](0, -1), 2, dict), "index -1 at slot 1"},
		{"dictionary index too large", withDict(dictU16, vints[uint16](1, 2), 2, dict), "index 2 at slot 1 is outside the dictionary of length 2"},
		{"dictionary missing", withDict(dictType, vints[int8](0), 1, nil), "without a dictionary"},
		{"dictionary itself corrupt", withDict(dictType, vints[int8](0), 1, vnd(str, 1, []*memory.Buffer{nil, vints[int32](0, 5), vbuf('a')}, nil, 0, 0)), "dictionary (utf8): last offset 5"},
		{"REE run ends not increasing", reeData(4, ends(2, 2, 4), 3), "run end 2 at run 1"},
		{"REE run end zero", reeData(4, ends(0, 4), 2), "run end 0 at run 0"},
		{"REE last run end too small", reeData(5, ends(1, 4), 2), "last run end 4 is before offset+length 5"},
		{"REE run ends with nulls", reeData(2, vnd(i32, 2, []*memory.Buffer{vbits(true, false), vints[int32](1, 2)}, nil, 1, 0), 2), "run ends have nulls"},
		{"REE too few values", reeData(2, ends(1, 2), 1), "1 values for 2 runs"},
		{"REE run ends of another type", vnd(ree, 1, []*memory.Buffer{nil}, []arrow.ArrayData{vnd(arrow.PrimitiveTypes.Int64, 1, []*memory.Buffer{nil, vints[int64](1)}, nil, 0, 0), vnd(str, 1, []*memory.Buffer{nil, vints[int32](0, 0), nil}, nil, 0, 0)}, 0, 0), "has type int64"},
		{"string view past its buffer", views(sview, vview(long, 0, 2), vstr(long)), "past the end of buffer 0"},
		{"string view missing buffer", views(sview, vview(long, 1, 0), vstr(long)), "refers to buffer 1 of 1"},
		{"string view negative length", views(sview, func() []byte { h := vview("", 0, 0); h[3] = 0x80; return h }()), "negative length"},
		{"string view invalid UTF-8", views(sview, vview("abcd\xffefghijklmn", 0, 0), vstr("abcd\xffefghijklmn")), "invalid UTF-8 at slot 0"},
		{"string view inline invalid UTF-8", views(sview, append(vview("ok", 0, 0), vview("a\xc3", 0, 0)...)), "invalid UTF-8 at slot 1"},
		{"binary view prefix mismatch", views(arrow.BinaryTypes.BinaryView, vview(long, 0, 1), vstr(long+"x")), "prefix"},
		{"views buffer too short", vnd(sview, 1, []*memory.Buffer{nil, vbuf(make([]byte, 8)...)}, nil, 0, 0), "views buffer has 8 bytes, needs 16"},
		{"struct child too short", vnd(arrow.StructOf(arrow.Field{Name: "a", Type: i32}), 3, []*memory.Buffer{nil}, []arrow.ArrayData{int32Child(2)}, 0, 1), "child 0 has length 2, shorter than offset+length 4"},
		{"struct missing child", vnd(arrow.StructOf(arrow.Field{Name: "a", Type: i32}), 1, []*memory.Buffer{nil}, nil, 0, 0), "has 0 children"},
		{"struct nil child", vnd(arrow.StructOf(arrow.Field{Name: "a", Type: i32}), 1, []*memory.Buffer{nil}, []arrow.ArrayData{nil}, 0, 0), "missing array data"},
		{"struct child of wrong type", vnd(arrow.StructOf(arrow.Field{Name: "a", Type: str}), 1, []*memory.Buffer{nil}, []arrow.ArrayData{int32Child(1)}, 0, 0), "has type int32"},
		{"struct grandchild corrupt", vnd(arrow.StructOf(arrow.Field{Name: "s", Type: str}), 1, []*memory.Buffer{nil}, []arrow.ArrayData{
			vnd(str, 1, []*memory.Buffer{nil, vints[int32](1, 0), nil}, nil, 0, 0)}, 0, 0), "array > child 0 (s) of struct (utf8): offsets decrease at slot 0"},
		{"fixed-size list child too short", vnd(arrow.FixedSizeListOf(3, i32), 2, []*memory.Buffer{nil}, []arrow.ArrayData{int32Child(5)}, 0, 0), "child has length 5, needs 6"},
		{"validity bitmap too short", vnd(i32, 9, []*memory.Buffer{vbits(true), vints(make([]int32, 9)...)}, nil, 0, 0), "validity bitmap has 1 bytes, needs 2"},
		{"null count disagrees with bitmap", vnd(i32, 2, []*memory.Buffer{vbits(true, false), vints[int32](1, 2)}, nil, 0, 0), "null count is 0"},
		{"unknown null count without a bitmap", vnd(i32, 2, []*memory.Buffer{nil, vints[int32](1, 2)}, nil, array.UnknownNullCount, 0), "unknown null count"},
		{"too few buffers", vnd(arrow.BinaryTypes.BinaryView, 0, []*memory.Buffer{nil}, nil, 0, 0), "has 1 buffers, its type 2"},
		{"nulls without a bitmap", vnd(i32, 2, []*memory.Buffer{nil, vints[int32](1, 2)}, nil, 1, 0), "without a validity bitmap"},
		{"int32 values too short", vnd(i32, 3, []*memory.Buffer{nil, vints[int32](1, 2)}, nil, 0, 0), "values buffer has 8 bytes, needs 12"},
		{"sliced int64 values too short", vnd(arrow.PrimitiveTypes.Int64, 2, []*memory.Buffer{nil, vints[int64](1, 2)}, nil, 0, 1), "needs 24"},
		{"fixed-size binary too short", vnd(&arrow.FixedSizeBinaryType{ByteWidth: 4}, 2, []*memory.Buffer{nil, vbuf(1, 2, 3, 4, 5)}, nil, 0, 0), "needs 8"},
		{"boolean values too short", vnd(arrow.FixedWidthTypes.Boolean, 9, []*memory.Buffer{nil, vbuf(0xff)}, nil, 0, 0), "values bitmap"},
		{"decimal32 out of precision", vnd(&arrow.Decimal32Type{Precision: 2}, 2, []*memory.Buffer{nil, vints[int32](99, 12345)}, nil, 0, 0), "value at slot 1 does not fit precision 2"},
		{"decimal32 negative out of precision", vnd(&arrow.Decimal32Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int32](-100)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal32 min int32", vnd(&arrow.Decimal32Type{Precision: 9}, 1, []*memory.Buffer{nil, vints[int32](math.MinInt32)}, nil, 0, 0), "does not fit precision 9"},
		{"decimal64 out of precision", vnd(&arrow.Decimal64Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](12345)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal64 min int64", vnd(&arrow.Decimal64Type{Precision: 18}, 1, []*memory.Buffer{nil, vints[int64](math.MinInt64)}, nil, 0, 0), "does not fit precision 18"},
		{"decimal128 out of precision", vnd(&arrow.Decimal128Type{Precision: 2}, 2, []*memory.Buffer{vbits(false, true), vints[int64](0, 0, 12345, 0)}, nil, 1, 0), "value at slot 1 does not fit precision 2"},
		{"decimal128 negative out of precision", vnd(&arrow.Decimal128Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](-12345, -1)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal128 min int128", vnd(&arrow.Decimal128Type{Precision: 38}, 1, []*memory.Buffer{nil, vints[int64](0, math.MinInt64)}, nil, 0, 0), "does not fit precision 38"},
		{"decimal256 out of precision", vnd(&arrow.Decimal256Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](12345, 0, 0, 0)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal256 high word set", vnd(&arrow.Decimal256Type{Precision: 76}, 1, []*memory.Buffer{nil, vints[int64](0, 0, 0, 1<<62)}, nil, 0, 0), "does not fit precision 76"},
		{"decimal precision 0", vnd(&arrow.Decimal128Type{Precision: 0}, 1, []*memory.Buffer{nil, vints[int64](0, 0)}, nil, 0, 0), "precision 0 is outside 1..38"},
		{"dense union offsets decrease within a child", vnd(dense, 3, []*memory.Buffer{nil, vints[int8](3, 7, 3), vints[int32](1, 0, 0)}, []arrow.ArrayData{int32Child(2), int32Child(1)}, 0, 0),
			"offset 0 at slot 2 is before child 0's previous offset 1"},
		{"string last offset huge", vnd(str, 1, []*memory.Buffer{nil, vints[int32](0, math.MaxInt32), vstr("abcd")}, nil, 0, 0), "last offset 2147483647 is past the end of the data buffer (4)"},
		{"large string last offset 2^62", vnd(arrow.BinaryTypes.LargeString, 1, []*memory.Buffer{nil, vints[int64](0, 1<<62), vstr("abcd")}, nil, 0, 0), "last offset 4611686018427387904 is past the end of the data buffer (4)"},
		{"binary last offset huge", vnd(arrow.BinaryTypes.Binary, 1, []*memory.Buffer{nil, vints[int32](0, math.MaxInt32), vstr("abcd")}, nil, 0, 0), "past the end of the data buffer (4)"},
		{"large binary last offset 2^62", vnd(arrow.BinaryTypes.LargeBinary, 1, []*memory.Buffer{nil, vints[int64](0, 1<<62), vstr("abcd")}, nil, 0, 0), "past the end of the data buffer (4)"},
		{"list last offset huge", vnd(listOfInt, 1, []*memory.Buffer{nil, vints[int32](0, math.MaxInt32)}, []arrow.ArrayData{int32Child(4)}, 0, 0), "last offset 2147483647 is past the end of the child (4)"},
		{"large list last offset 2^62", vnd(arrow.LargeListOf(i32), 1, []*memory.Buffer{nil, vints[int64](0, 1<<62)}, []arrow.ArrayData{int32Child(4)}, 0, 0), "past the end of the child (4)"},
		{"list view offset plus size overflows", vnd(arrow.ListViewOf(i32), 1, []*memory.Buffer{nil, vints[int32](math.MaxInt32), vints[int32](math.MaxInt32)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "outside the child of length 3"},
		{"large list view offset 2^62", vnd(arrow.LargeListViewOf(i32), 1, []*memory.Buffer{nil, vints[int64](1 << 62), vints[int64](1)}, []arrow.ArrayData{int32Child(3)}, 0, 0), "outside the child of length 3"},
		{"string view offset huge", views(sview, vview(long, 0, math.MaxInt32), vstr(long)), "past the end of buffer 0"},
		{"decimal128 values too short", vnd(&arrow.Decimal128Type{Precision: 5}, 1, []*memory.Buffer{nil, vbuf(make([]byte, 8)...)}, nil, 0, 0), "needs 16"},
		{"length overflows", vnd(i32, math.MaxInt, []*memory.Buffer{nil, vints[int32](1)}, nil, 0, 1), "overflows"},
		{"buffer size overflows", vnd(i32, math.MaxInt/64, []*memory.Buffer{nil, vints[int32](1)}, nil, 0, 0), "values buffer has 4 bytes"},
		{"negative offset", vnd(i32, 1, []*memory.Buffer{nil, vints[int32](1)}, nil, 0, -1), "negative"},
		{"nesting too deep", deep, "nested deeper than 64"},
		{"extension with corrupt storage", vnd(opaque, 1, []*memory.Buffer{nil, vints[int32](0, 1), vbuf(0xfe)}, nil, 0, 0), "(utf8): invalid UTF-8"},
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runValidate(t, c.d)
			t.Log(err)
			switch {
			case !errors.Is(err, ErrInvalid):
				t.Fatalf("got %v, want ErrInvalid", err)
			case strings.Contains(err.Error(), "malformed"):
				t.Errorf("only the panic backstop caught it: %v", err)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("got %q, want it to mention %q", err, c.want)
			}
		})
	}
}

// TestValidateRecordBatchContents: ValidateRecordBatch with full
// validation refuses Go-built batches whose values break rules that only a
// full pass sees (decimals past their precision, dense union offsets going
// back within a child), naming the column; without the option it checks
// nothing.
func TestValidateRecordBatchContents(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	dense := arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: i32}, {Name: "b", Type: i32}}, []arrow.UnionTypeCode{3, 7})
	cases := []struct {
		name string
		d    arrow.ArrayData
		want string
	}{
		{"decimal32", vnd(&arrow.Decimal32Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int32](12345)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal64", vnd(&arrow.Decimal64Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](12345)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal128", vnd(&arrow.Decimal128Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](12345, 0)}, nil, 0, 0), "does not fit precision 2"},
		{"decimal256", vnd(&arrow.Decimal256Type{Precision: 2}, 1, []*memory.Buffer{nil, vints[int64](12345, 0, 0, 0)}, nil, 0, 0), "does not fit precision 2"},
		{"dense union", vnd(dense, 3, []*memory.Buffer{nil, vints[int8](7, 7, 3), vints[int32](1, 0, 0)}, []arrow.ArrayData{int32Child(1), int32Child(2)}, 0, 0),
			"offset 0 at slot 1 is before child 1's previous offset 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := array.MakeFromData(c.d)
			defer col.Release()
			sc := arrow.NewSchema([]arrow.Field{{Name: "ok", Type: i32}, {Name: "bad", Type: col.DataType()}}, nil)
			ok := array.MakeFromData(int32Child(col.Len()))
			defer ok.Release()
			rb := array.NewRecordBatch(sc, []arrow.Array{ok, col}, int64(col.Len()))
			defer rb.Release()
			if err := ValidateRecordBatch(rb); err != nil {
				t.Errorf("without full validation: %v", err)
			}
			err := ValidateRecordBatch(rb, WithFullValidation())
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "column 1 (bad)") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrInvalid naming column 1 (bad) and %q", err, c.want)
			}
		})
	}
}

// TestValidateNilArray: a nil or typed-nil array is an error, not a panic.
func TestValidateNilArray(t *testing.T) {
	for _, arr := range []arrow.Array{nil, (*array.Int32)(nil)} {
		if err := ValidateFull(arr); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateFull(%#v) = %v, want ErrInvalid", arr, err)
		}
	}
}

// TestValidateHonoursOffset: corruption outside a slice's window is not the
// slice's problem, and a null slot's bytes are not checked as UTF-8.
func TestValidateHonoursOffset(t *testing.T) {
	str := arrow.BinaryTypes.String
	for name, d := range map[string]*array.Data{
		"decrease before the slice":  vnd(str, 2, []*memory.Buffer{nil, vints[int32](2, 0, 1, 2, 3), vstr("abc")}, nil, 0, 2),
		"bad UTF-8 before the slice": vnd(str, 1, []*memory.Buffer{nil, vints[int32](0, 1, 2), vbuf(0xff, 'a')}, nil, 0, 1),
		"bad UTF-8 in a null slot":   vnd(str, 2, []*memory.Buffer{vbits(false, true), vints[int32](0, 1, 2), vbuf(0xff, 'a')}, nil, 1, 0),
		"bad dictionary index in a null slot": func() *array.Data {
			d := vnd(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str}, 2,
				[]*memory.Buffer{vbits(true, false), vints[int8](0, 99)}, nil, 1, 0)
			d.SetDictionary(vnd(str, 1, []*memory.Buffer{nil, vints[int32](0, 1), vbuf('a')}, nil, 0, 0))
			return d
		}(),
		"list view null slot out of range": vnd(arrow.ListViewOf(arrow.PrimitiveTypes.Int32), 2,
			[]*memory.Buffer{vbits(true, false), vints[int32](0, 50), vints[int32](1, 9)}, []arrow.ArrayData{int32Child(1)}, 1, 0),
		"unknown null count": vnd(arrow.PrimitiveTypes.Int32, 2, []*memory.Buffer{vbits(true, false), vints[int32](1, 2)}, nil, array.UnknownNullCount, 0),
		"REE sliced": vnd(arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32), 2, []*memory.Buffer{nil},
			[]arrow.ArrayData{vnd(arrow.PrimitiveTypes.Int16, 2, []*memory.Buffer{nil, vints[int16](2, 4)}, nil, 0, 0), int32Child(2)}, 0, 2),
		"empty string without offsets": vnd(str, 0, []*memory.Buffer{nil, nil, nil}, nil, 0, 0),
	} {
		if err := runValidate(t, d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// validJSON has a value of every type, with nulls wherever the type allows.
var validJSON = []struct {
	dt   arrow.DataType
	json string
}{
	{arrow.Null, `[null, null, null, null]`},
	{arrow.FixedWidthTypes.Boolean, `[true, null, false, true, false, true, true, false, true, null]`},
	{arrow.PrimitiveTypes.Int8, `[1, null, -3, 4]`},
	{arrow.PrimitiveTypes.Int16, `[1, null, -3, 4]`},
	{arrow.PrimitiveTypes.Int32, `[1, null, -3, 4]`},
	{arrow.PrimitiveTypes.Int64, `[1, null, -3, 4]`},
	{arrow.PrimitiveTypes.Uint8, `[1, null, 3, 4]`},
	{arrow.PrimitiveTypes.Uint16, `[1, null, 3, 4]`},
	{arrow.PrimitiveTypes.Uint32, `[1, null, 3, 4]`},
	{arrow.PrimitiveTypes.Uint64, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.Float16, `[1.5, null, 3, 4]`},
	{arrow.PrimitiveTypes.Float32, `[1.5, null, 3, 4]`},
	{arrow.PrimitiveTypes.Float64, `[1.5, null, 3, 4]`},
	{arrow.BinaryTypes.String, `["a", null, "héllo", "", "z"]`},
	{arrow.BinaryTypes.LargeString, `["a", null, "héllo", "", "z"]`},
	{arrow.BinaryTypes.Binary, `["YQ==", null, "/w==", ""]`},
	{arrow.BinaryTypes.LargeBinary, `["YQ==", null, "/w==", ""]`},
	{arrow.BinaryTypes.StringView, `["short", null, "a string longer than twelve bytes", "", "another long string, ünïcode"]`},
	{arrow.BinaryTypes.BinaryView, `["YQ==", null, "AAECAwQFBgcICQoLDA0ODxAREhM=", ""]`},
	{&arrow.FixedSizeBinaryType{ByteWidth: 3}, `["YWJj", null, "ZGVm", "Z2hp"]`},
	{arrow.FixedWidthTypes.Date32, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.Date64, `[86400000, null, 0, 172800000]`},
	{arrow.FixedWidthTypes.Time32ms, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.Time64ns, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.Timestamp_us, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.Duration_s, `[1, null, 3, 4]`},
	{arrow.FixedWidthTypes.MonthInterval, `[{"months": 1}, null, {"months": 3}, {"months": 4}]`},
	{arrow.FixedWidthTypes.DayTimeInterval, `[{"days": 1, "milliseconds": 2}, null, {"days": 3, "milliseconds": 4}, {"days": 0, "milliseconds": 0}]`},
	{arrow.FixedWidthTypes.MonthDayNanoInterval, `[{"months": 1, "days": 2, "nanoseconds": 3}, null, {"months": 0, "days": 0, "nanoseconds": 0}, {"months": 4, "days": 5, "nanoseconds": 6}]`},
	{&arrow.Decimal32Type{Precision: 5, Scale: 1}, `["1.5", null, "3.0", "4.1"]`},
	{&arrow.Decimal64Type{Precision: 10, Scale: 1}, `["1.5", null, "3.0", "4.1"]`},
	{&arrow.Decimal128Type{Precision: 20, Scale: 1}, `["1.5", null, "3.0", "4.1"]`},
	{&arrow.Decimal256Type{Precision: 40, Scale: 1}, `["1.5", null, "3.0", "4.1"]`},
	{arrow.ListOf(arrow.BinaryTypes.String), `[["a", null], null, [], ["b", "c", "d"]]`},
	{arrow.LargeListOf(arrow.PrimitiveTypes.Int32), `[[1, null], null, [], [2, 3, 4]]`},
	{arrow.ListViewOf(arrow.PrimitiveTypes.Int32), `[[1, null], null, [], [2, 3, 4]]`},
	{arrow.LargeListViewOf(arrow.BinaryTypes.String), `[["a", null], null, [], ["b", "c", "d"]]`},
	{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), `[[1, null], null, [3, 4], [5, 6]]`},
	{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}),
		`[{"a": 1, "b": "x"}, null, {"a": null, "b": "y"}, {"a": 4, "b": null}]`},
	{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), `[[{"key": "a", "value": 1}], null, [], [{"key": "b", "value": null}, {"key": "c", "value": 3}]]`},
	{arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{5, 9}),
		`[[5, 1], [9, "x"], [5, null], [9, "y"], [5, 4]]`},
	{arrow.DenseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{5, 9}),
		`[[5, 1], [9, "x"], [5, null], [9, "y"], [5, 4]]`},
	{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, `["a", null, "b", "a", "c"]`},
	{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.PrimitiveTypes.Int64}, `[1, null, 2, 1, 3]`},
	{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), `["a", "a", null, null, "b", "c", "c"]`},
	{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int16), `[1, 1, 1, 2, null, 3]`},
}

// TestValidateValid: well-formed arrays of every type pass, whole and
// sliced (non-zero offset, nulls inside and outside the window).
func TestValidateValid(t *testing.T) {
	mem := memory.NewGoAllocator()
	check := func(name string, arr arrow.Array) {
		t.Helper()
		if err := ValidateFull(arr); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, w := range [][2]int64{{1, int64(arr.Len())}, {1, int64(arr.Len()) - 1}, {2, 2}, {int64(arr.Len()), int64(arr.Len())}} {
			s := array.NewSlice(arr, w[0], w[1])
			if err := ValidateFull(s); err != nil {
				t.Errorf("%s[%d:%d]: %v", name, w[0], w[1], err)
			}
			s.Release()
		}
	}
	for _, c := range validJSON {
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
		if err != nil {
			t.Errorf("%s: building: %v", c.dt, err)
			continue
		}
		check(c.dt.String(), arr)
		// the same values nested in a struct and in a list, sliced with them
		st, err := array.NewStructArray([]arrow.Array{arr}, []string{"f"})
		if err != nil {
			t.Fatal(err)
		}
		check("struct<"+c.dt.String()+">", st)
		lst := array.NewListData(array.NewData(arrow.ListOf(c.dt), 2, []*memory.Buffer{nil, vints[int32](0, 1, int32(arr.Len()))},
			[]arrow.ArrayData{arr.Data()}, 0, 0))
		check("list<"+c.dt.String()+">", lst)
		lst.Release()
		st.Release()
		arr.Release()
	}

	// extension arrays are validated as their storage
	storage, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a", null, "b", "c"]`))
	if err != nil {
		t.Fatal(err)
	}
	ext := array.NewExtensionArrayWithStorage(newVext(arrow.BinaryTypes.String), storage)
	check("extension", ext)
	ext.Release()
	storage.Release()
}

// TestValidateGold: every batch of every Arrow C++ gold stream passes, whole
// and sliced.
func TestValidateGold(t *testing.T) {
	files, err := filepath.Glob("testdata/arrow-integration/cpp-21.0.0/*.stream")
	if err != nil || len(files) == 0 {
		t.Fatalf("no gold streams (%v)", err)
	}
	batches := 0
	for _, f := range files {
		name := filepath.Base(f)
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := ipc.NewReader(r)
		if err != nil {
			r.Close()
			t.Errorf("%s: %v", name, err)
			continue
		}
		for rd.Next() {
			rb := rd.RecordBatch()
			batches++
			for i, col := range rb.Columns() {
				if err := ValidateFull(col); err != nil {
					t.Errorf("%s batch %d column %d: %v", name, batches, i, err)
				}
				if col.Len() > 1 {
					s := array.NewSlice(col, 1, int64(col.Len()))
					if err := ValidateFull(s); err != nil {
						t.Errorf("%s batch %d column %d sliced: %v", name, batches, i, err)
					}
					s.Release()
				}
			}
			if err := (importConfig{full: true}).validateBatch(rb); err != nil {
				t.Errorf("%s batch %d: %v", name, batches, err)
			}
		}
		if err := rd.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		rd.Release()
		r.Close()
	}
	t.Logf("%d batches of %d streams validated", batches, len(files))
}

func TestValidateImportOptions(t *testing.T) {
	if applyImportOptions(nil).full {
		t.Error("full validation on by default")
	}
	if !applyImportOptions([]ImportOption{{}, WithFullValidation()}).full {
		t.Error("WithFullValidation ignored")
	}
	bad := array.MakeFromData(vnd(arrow.PrimitiveTypes.Int32, 2, []*memory.Buffer{nil, vints[int32](1)}, nil, 0, 0))
	defer bad.Release()
	if err := applyImportOptions(nil).validate(bad); err != nil {
		t.Errorf("default validate = %v, want nil", err)
	}
	if err := applyImportOptions([]ImportOption{WithFullValidation()}).validate(bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("full validate = %v, want ErrInvalid", err)
	}
}

// vcorrupt copies d with random damage: bytes overwritten, buffers cut
// short or dropped, children dropped, length, offset or null count moved.
func vcorrupt(r *rand.Rand, d arrow.ArrayData) *array.Data {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b == nil {
			continue
		}
		c := append([]byte(nil), b.Bytes()...)
		for k := r.Intn(4); len(c) > 0 && k > 0; k-- {
			c[r.Intn(len(c))] = byte(r.Intn(256))
		}
		if r.Intn(8) == 0 {
			c = c[:r.Intn(len(c)+1)]
		}
		bufs[i] = memory.NewBufferBytes(c)
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = vcorrupt(r, c)
	}
	n, off, nulls := d.Len(), d.Offset(), d.NullN()
	switch r.Intn(10) {
	case 0:
		n += r.Intn(5) - 2
	case 1:
		off += r.Intn(5) - 2
	case 2:
		nulls += r.Intn(3) - 1
	case 3:
		bufs = bufs[:r.Intn(len(bufs)+1)]
	case 4:
		children = children[:r.Intn(len(children)+1)]
	case 5:
		if len(bufs) > 0 {
			bufs[r.Intn(len(bufs))] = nil
		}
	}
	out := vnd(d.DataType(), n, bufs, children, nulls, off)
	if dict := d.Dictionary(); !isNilData(dict) {
		out.SetDictionary(vcorrupt(r, dict))
	}
	return out
}

// TestValidateFuzz damages valid arrays at random: explicit checks (not the
// panic backstop) must catch what they catch, and arrow-go must be able to
// build and read whatever passes without panicking.
func TestValidateFuzz(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	mem := memory.NewGoAllocator()
	caught, passed := 0, 0
	for _, c := range validJSON {
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
		if err != nil {
			t.Fatal(err)
		}
		for range 500 {
			d := vcorrupt(r, arr.Data())
			if err := validateData(d, "array"); err != nil {
				if strings.Contains(err.Error(), "malformed") {
					t.Errorf("%s: only the panic backstop caught it: %v", c.dt, err)
				}
				caught++
				continue
			}
			passed++
			func() {
				defer func() {
					if x := recover(); x != nil {
						t.Errorf("%s: passed validation, but reading it panics: %v", c.dt, x)
					}
				}()
				a := array.MakeFromData(d)
				defer a.Release()
				for i := range a.Len() {
					_ = a.ValueStr(i)
				}
				_ = array.Equal(a, a)
			}()
		}
		arr.Release()
	}
	t.Logf("%d damaged arrays refused, %d passed and read back", caught, passed)
}
