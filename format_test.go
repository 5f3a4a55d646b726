package cdevice

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

// fmtTestExt is a minimal extension type: formatOf must describe its storage.
type fmtTestExt struct{ arrow.ExtensionBase }

func (*fmtTestExt) ExtensionName() string   { return "cdevice.fmt_test" }
func (*fmtTestExt) Serialize() string       { return "" }
func (*fmtTestExt) ArrayType() reflect.Type { return nil }
func (e *fmtTestExt) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == e.ExtensionName()
}
func (*fmtTestExt) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) { return nil, nil }

// fmtTestAlien is a data type with an id no Arrow version defines.
type fmtTestAlien struct{}

func (fmtTestAlien) ID() arrow.Type               { return arrow.Type(250) }
func (fmtTestAlien) Name() string                 { return "alien" }
func (fmtTestAlien) Fingerprint() string          { return "alien" }
func (fmtTestAlien) String() string               { return "alien" }
func (fmtTestAlien) Layout() arrow.DataTypeLayout { return arrow.DataTypeLayout{} }

func fmtTestMD(kv ...string) arrow.Metadata {
	var k, v []string
	for i := 0; i < len(kv); i += 2 {
		k, v = append(k, kv[i]), append(v, kv[i+1])
	}
	return arrow.NewMetadata(k, v)
}

// fmtRoundTripCases pairs every arrow-go type with its expected format string.
func fmtRoundTripCases() []struct {
	dt     arrow.DataType
	format string
} {
	type tc = struct {
		dt     arrow.DataType
		format string
	}
	var cases []tc
	for f, dt := range simpleTypes {
		cases = append(cases, tc{dt, f})
	}
	units := map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "m", arrow.Microsecond: "u", arrow.Nanosecond: "n"}
	for u, l := range units {
		for _, tz := range []string{"", "UTC", "America/New_York", "+05:30", "Europe/Zürich"} {
			cases = append(cases, tc{&arrow.TimestampType{Unit: u, TimeZone: tz}, "ts" + l + ":" + tz})
		}
		cases = append(cases, tc{&arrow.DurationType{Unit: u}, "tD" + l})
	}
	cases = append(cases,
		tc{arrow.FixedWidthTypes.Time32s, "tts"}, tc{arrow.FixedWidthTypes.Time64ns, "ttn"},
		tc{&arrow.FixedSizeBinaryType{ByteWidth: 1}, "w:1"},
		tc{&arrow.FixedSizeBinaryType{ByteWidth: 16}, "w:16"},
		tc{&arrow.Decimal32Type{Precision: 1, Scale: 0}, "d:1,0,32"},
		tc{&arrow.Decimal32Type{Precision: 9, Scale: -2}, "d:9,-2,32"},
		tc{&arrow.Decimal64Type{Precision: 18, Scale: 4}, "d:18,4,64"},
		tc{&arrow.Decimal128Type{Precision: 38, Scale: 10}, "d:38,10"},
		tc{&arrow.Decimal128Type{Precision: 5, Scale: 7}, "d:5,7"},
		tc{&arrow.Decimal256Type{Precision: 76, Scale: 20}, "d:76,20,256"},
		tc{&arrow.Decimal256Type{Precision: 40, Scale: 0}, "d:40,0,256"},
		tc{arrow.ListOf(arrow.PrimitiveTypes.Int32), "+l"},
		tc{arrow.ListOfField(arrow.Field{Name: "elem", Type: arrow.BinaryTypes.String, Metadata: fmtTestMD("k", "v")}), "+l"},
		tc{arrow.LargeListOf(arrow.PrimitiveTypes.Float64), "+L"},
		tc{arrow.LargeListOfField(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8}), "+L"},
		tc{arrow.ListViewOfField(arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int16, Nullable: true}), "+vl"},
		tc{arrow.LargeListViewOfField(arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int16}), "+vL"},
		tc{arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), "+w:3"},
		tc{arrow.FixedSizeListOfField(1<<31-1, arrow.Field{Name: "p", Type: arrow.PrimitiveTypes.Uint8}), "+w:2147483647"},
		tc{arrow.StructOf(), "+s"},
		tc{arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.StringView, Metadata: fmtTestMD("x", "")},
			arrow.Field{Name: "a", Type: arrow.FixedWidthTypes.Boolean}), "+s"},
		tc{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), "+m"},
		tc{func() arrow.DataType {
			m := arrow.MapOfWithMetadata(arrow.PrimitiveTypes.Int32, fmtTestMD("kk", "1"), arrow.BinaryTypes.Binary, fmtTestMD("vv", "2"))
			m.SetItemNullable(false)
			m.KeysSorted = true
			return m
		}(), "+m"},
		tc{arrow.DenseUnionOf([]arrow.Field{
			{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			{Name: "s", Type: arrow.BinaryTypes.String},
			{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)},
		}, []arrow.UnionTypeCode{2, 5, 127}), "+ud:2,5,127"},
		tc{arrow.DenseUnionOf([]arrow.Field{
			{Name: "a", Type: arrow.PrimitiveTypes.Int8}, {Name: "b", Type: arrow.PrimitiveTypes.Int8},
		}, []arrow.UnionTypeCode{10, 3}), "+ud:10,3"},
		tc{arrow.SparseUnionOf([]arrow.Field{
			{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		}, []arrow.UnionTypeCode{0, 1}), "+us:0,1"},
		tc{arrow.SparseUnionOf(nil, nil), "+us:"},
		tc{arrow.DenseUnionOf(nil, nil), "+ud:"},
		tc{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int16, arrow.BinaryTypes.String), "+r"},
		tc{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32), "+r"},
		tc{func() arrow.DataType {
			r := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8)
			r.ValueNullable = false
			return r
		}(), "+r"},
		tc{arrow.ListOf(arrow.StructOf(arrow.Field{Name: "m", Nullable: true,
			Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Int32))})), "+l"},
	)
	return cases
}

// fmtFieldsEqual compares child fields fully: names, nullability, types, metadata.
func fmtFieldsEqual(a, b []arrow.Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Nullable != b[i].Nullable || !a[i].Metadata.Equal(b[i].Metadata) ||
			!arrow.TypeEqual(a[i].Type, b[i].Type, arrow.CheckMetadata()) {
			return false
		}
	}
	return true
}

func TestFormatRoundTrip(t *testing.T) {
	for _, c := range fmtRoundTripCases() {
		t.Run(c.dt.String(), func(t *testing.T) {
			f, err := formatOf(c.dt)
			if err != nil || f != c.format {
				t.Fatalf("formatOf = %q, %v; want %q", f, err, c.format)
			}
			var children []arrow.Field
			if n, ok := c.dt.(arrow.NestedType); ok {
				children = n.Fields()
			}
			var flags int64
			if m, ok := c.dt.(*arrow.MapType); ok && m.KeysSorted {
				flags = abi.FlagMapKeysSorted
			}
			got, err := typeFromFormat(f, children, flags|abi.FlagNullable)
			if err != nil {
				t.Fatalf("typeFromFormat(%q): %v", f, err)
			}
			if !arrow.TypeEqual(c.dt, got, arrow.CheckMetadata()) || c.dt.Fingerprint() != got.Fingerprint() {
				t.Fatalf("round trip: got %s, want %s", got, c.dt)
			}
			if n, ok := got.(arrow.NestedType); ok && !fmtFieldsEqual(children, n.Fields()) {
				t.Fatalf("children: got %v, want %v", n.Fields(), children)
			}
		})
	}
}

func TestFormatOfWrappers(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.String, Ordered: true}
	if f, err := formatOf(dict); err != nil || f != "S" {
		t.Errorf("dictionary: %q, %v; want index format \"S\"", f, err)
	}
	ext := &fmtTestExt{arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: 16}}}
	if f, err := formatOf(ext); err != nil || f != "w:16" {
		t.Errorf("extension: %q, %v; want storage format \"w:16\"", f, err)
	}
	nested := &fmtTestExt{arrow.ExtensionBase{Storage: arrow.ListOf(arrow.PrimitiveTypes.Int32)}}
	if f, err := formatOf(nested); err != nil || f != "+l" {
		t.Errorf("extension of list: %q, %v", f, err)
	}
}

func TestFormatOfErrors(t *testing.T) {
	cases := []struct {
		name string
		dt   arrow.DataType
		want error
	}{
		{"nil", nil, ErrInvalid},
		{"time32 us", &arrow.Time32Type{Unit: arrow.Microsecond}, ErrInvalid},
		{"time64 s", &arrow.Time64Type{Unit: arrow.Second}, ErrInvalid},
		{"duration unit 9", &arrow.DurationType{Unit: 9}, ErrInvalid},
		{"timestamp unit 7", &arrow.TimestampType{Unit: 7}, ErrInvalid},
		{"timestamp NUL zone", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC\x00x"}, ErrInvalid},
		{"fsb -1", &arrow.FixedSizeBinaryType{ByteWidth: -1}, ErrInvalid},
		{"decimal32 precision 10", &arrow.Decimal32Type{Precision: 10}, ErrInvalid},
		{"decimal128 precision 0", &arrow.Decimal128Type{Precision: 0}, ErrInvalid},
		{"decimal256 precision 77", &arrow.Decimal256Type{Precision: 77}, ErrInvalid},
		{"float dictionary index", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Float32, ValueType: arrow.BinaryTypes.String}, ErrInvalid},
		{"nil dictionary index", &arrow.DictionaryType{ValueType: arrow.BinaryTypes.String}, ErrInvalid},
		{"extension of nothing", &fmtTestExt{}, ErrInvalid},
		{"alien type", fmtTestAlien{}, ErrUnsupported},
	}
	for _, c := range cases {
		f, err := formatOf(c.dt)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: formatOf = %q, %v; want %v", c.name, f, err, c.want)
		}
	}
}

func TestFormatMalformed(t *testing.T) {
	i32 := arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int32}
	one := []arrow.Field{i32}
	bad := []string{
		"", ":", ":x", "x", "ii", "nn", "u ", "\x00", "c:", "tdD:", "L8",
		"d", "d:", "d:38", "d:38,", "d:,2", "d:38,2,", "d:38,2,128,1", "d:38,2,100", "d:38,2,-128",
		"d:0,2", "d:-1,2", "d:39,2", "d:39,2,128", "d:10,2,32", "d:19,0,64", "d:77,0,256",
		"d:+5,2", "d: 5,2", "d:5,2 ", "d:5.0,2", "d:99999999999,2", "d:5,99999999999",
		"w", "w:", "w:0", "w:-1", "w:abc", "w:1x", "w:+3", "w:0x10", "w:4294967297",
		"ts", "tss", "tsu", "tsx:", "tsx:UTC", "tsuu:", "t", "tt", "ttx", "tts:", "tD", "tDx", "tDss",
		"ti", "tix", "tiMM", "td", "tdx", "tdDD",
		"+", "+x", "+ll", "+l:", "+L ", "+s:", "+m:", "+r:", "+v", "+vx", "+vll", "+vz",
		"+w", "+w:", "+w:-1", "+w:abc", "+w:1.5", "+w:2147483648", "+W:1",
		"+u", "+ux:1", "+us", "+ud", "+us:a", "+ud:1,", "+ud:,1", "+ud:1,,2", "+ud:128", "+ud:-1",
		"+ud:1,1", "+us: 1", "+us:+1", "+ud:300",
	}
	for _, f := range bad {
		children := one
		if strings.HasPrefix(f, "+s") {
			children = nil
		}
		dt, err := typeFromFormat(f, children, 0)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("typeFromFormat(%q) = %v, %v; want ErrInvalid", f, dt, err)
		}
	}
	if len(bad) < 25 {
		t.Fatalf("only %d malformed formats", len(bad))
	}
}

func TestFormatChildErrors(t *testing.T) {
	i32 := arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int32}
	str := arrow.Field{Name: "s", Type: arrow.BinaryTypes.String}
	f64 := arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float64}
	ree := arrow.Field{Name: "r", Type: arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int8)}
	entries := func(fs ...arrow.Field) arrow.Field { return arrow.Field{Name: "entries", Type: arrow.StructOf(fs...)} }
	cases := []struct {
		format   string
		children []arrow.Field
		want     error
	}{
		{"i", []arrow.Field{i32}, ErrInvalid},
		{"tsu:UTC", []arrow.Field{i32}, ErrInvalid},
		{"d:5,2", []arrow.Field{i32}, ErrInvalid},
		{"w:4", []arrow.Field{i32}, ErrInvalid},
		{"+l", nil, ErrInvalid},
		{"+L", []arrow.Field{i32, i32}, ErrInvalid},
		{"+vl", nil, ErrInvalid},
		{"+vL", []arrow.Field{i32, str}, ErrInvalid},
		{"+w:2", nil, ErrInvalid},
		{"+s", []arrow.Field{i32, {Name: "nil type"}}, ErrInvalid},
		{"+l", []arrow.Field{{Name: "item"}}, ErrInvalid},
		{"+m", nil, ErrInvalid},
		{"+m", []arrow.Field{i32}, ErrInvalid},
		{"+m", []arrow.Field{entries(i32)}, ErrInvalid},
		{"+m", []arrow.Field{entries(i32, str, f64)}, ErrInvalid},
		{"+m", []arrow.Field{entries(i32, str), entries(i32, str)}, ErrInvalid},
		{"+r", []arrow.Field{i32}, ErrInvalid},
		{"+r", []arrow.Field{i32, str, str}, ErrInvalid},
		{"+r", []arrow.Field{f64, str}, ErrInvalid},
		{"+r", []arrow.Field{{Name: "u", Type: arrow.PrimitiveTypes.Uint32}, str}, ErrInvalid},
		{"+r", []arrow.Field{{Name: "i8", Type: arrow.PrimitiveTypes.Int8}, str}, ErrInvalid},
		{"+r", []arrow.Field{i32, ree}, ErrInvalid},
		{"+us:1,2", []arrow.Field{i32}, ErrInvalid},
		{"+ud:1", []arrow.Field{i32, str}, ErrInvalid},
		{"+us:", []arrow.Field{i32}, ErrInvalid},
		{"+w:0", []arrow.Field{i32}, ErrUnsupported},
	}
	for _, c := range cases {
		dt, err := typeFromFormat(c.format, c.children, 0)
		if !errors.Is(err, c.want) {
			t.Errorf("typeFromFormat(%q, %d children) = %v, %v; want %v", c.format, len(c.children), dt, err, c.want)
		}
	}
}

// TestFormatMapChildren: arrow-go fixes the map's entry and field names and
// the key's nullability; the rest comes from the children.
func TestFormatMapChildren(t *testing.T) {
	key := arrow.Field{Name: "keys", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fmtTestMD("a", "1")}
	val := arrow.Field{Name: "values", Type: arrow.PrimitiveTypes.Int16, Metadata: fmtTestMD("b", "2")}
	dt, err := typeFromFormat("+m", []arrow.Field{{Name: "kv", Type: arrow.StructOf(key, val)}}, abi.FlagMapKeysSorted)
	if err != nil {
		t.Fatal(err)
	}
	m := dt.(*arrow.MapType)
	if !m.KeysSorted || m.KeyField().Nullable || m.ItemField().Nullable ||
		!m.KeyField().Metadata.Equal(key.Metadata) || !m.ItemField().Metadata.Equal(val.Metadata) ||
		m.KeyField().Name != "key" || m.ItemField().Name != "value" {
		t.Fatalf("map = %s, key %v, item %v", m, m.KeyField(), m.ItemField())
	}
	// The union must not alias the caller's children slice.
	children := []arrow.Field{key, val}
	u, err := typeFromFormat("+ud:4,9", children, 0)
	if err != nil {
		t.Fatal(err)
	}
	children[0].Name = "changed"
	if u.(arrow.UnionType).Fields()[0].Name != "keys" {
		t.Fatal("union aliases its children slice")
	}
}

// fmtBlobAddr returns the address of b's first byte, pinned until the test ends
// (pinning also moves b to the heap, so the address outlives stack growth).
// FuzzFormat: any string, with or without children, gives a type or an error
// wrapping a sentinel, never a panic; a type it gives survives formatOf again.
func FuzzFormat(f *testing.F) {
	for _, c := range fmtRoundTripCases() {
		f.Add(c.format, uint8(0))
	}
	f.Add("+ud:1,2", uint8(2))
	f.Add("+w:3", uint8(1))
	f.Fuzz(func(t *testing.T, format string, nChildren uint8) {
		children := make([]arrow.Field, nChildren%4)
		for i := range children {
			children[i] = arrow.Field{Name: fmt.Sprint(i), Type: arrow.PrimitiveTypes.Int32}
		}
		dt, err := typeFromFormat(format, children, abi.FlagMapKeysSorted)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("%q: error %v wraps no sentinel", format, err)
			}
			return
		}
		f2, err := formatOf(dt)
		if err != nil {
			t.Fatalf("%q -> %s: formatOf: %v", format, dt, err)
		}
		var again []arrow.Field
		if n, ok := dt.(arrow.NestedType); ok {
			again = n.Fields()
		}
		dt2, err := typeFromFormat(f2, again, abi.FlagMapKeysSorted)
		if err != nil || !arrow.TypeEqual(dt, dt2) {
			t.Fatalf("%q -> %q: %v, %v", format, f2, dt2, err)
		}
	})
}
