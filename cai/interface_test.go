package cai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cai"
)

// ne is the host's byte order character, for typestrs of multi-byte types.
var ne = string(cai.NativeOrder)

// other is the byte order character that is not the host's.
var other = map[string]string{"<": ">", ">": "<"}[ne]

func ptr(v int64) *int64 { return &v }

// Every supported typestr maps to its Arrow type and back.
func TestTypestrs(t *testing.T) {
	cases := []struct {
		typestr string
		want    arrow.DataType
		back    string // Typestr(want), when it is not typestr itself
	}{
		{"|b1", arrow.FixedWidthTypes.Boolean, ""},
		{"<b1", arrow.FixedWidthTypes.Boolean, "|b1"},
		{">b1", arrow.FixedWidthTypes.Boolean, "|b1"},
		{"|i1", arrow.PrimitiveTypes.Int8, ""},
		{"<i1", arrow.PrimitiveTypes.Int8, "|i1"},
		{">i1", arrow.PrimitiveTypes.Int8, "|i1"},
		{"|u1", arrow.PrimitiveTypes.Uint8, ""},
		{"<u1", arrow.PrimitiveTypes.Uint8, "|u1"},
		{ne + "i2", arrow.PrimitiveTypes.Int16, ""},
		{ne + "i4", arrow.PrimitiveTypes.Int32, ""},
		{ne + "i8", arrow.PrimitiveTypes.Int64, ""},
		{ne + "u2", arrow.PrimitiveTypes.Uint16, ""},
		{ne + "u4", arrow.PrimitiveTypes.Uint32, ""},
		{ne + "u8", arrow.PrimitiveTypes.Uint64, ""},
		{ne + "f2", arrow.FixedWidthTypes.Float16, ""},
		{ne + "f4", arrow.PrimitiveTypes.Float32, ""},
		{ne + "f8", arrow.PrimitiveTypes.Float64, ""},
		{ne + "M8[s]", &arrow.TimestampType{Unit: arrow.Second}, ""},
		{ne + "M8[ms]", &arrow.TimestampType{Unit: arrow.Millisecond}, ""},
		{ne + "M8[us]", &arrow.TimestampType{Unit: arrow.Microsecond}, ""},
		{ne + "M8[ns]", &arrow.TimestampType{Unit: arrow.Nanosecond}, ""},
		{ne + "m8[s]", &arrow.DurationType{Unit: arrow.Second}, ""},
		{ne + "m8[ms]", &arrow.DurationType{Unit: arrow.Millisecond}, ""},
		{ne + "m8[us]", &arrow.DurationType{Unit: arrow.Microsecond}, ""},
		{ne + "m8[ns]", &arrow.DurationType{Unit: arrow.Nanosecond}, ""},
	}
	for _, c := range cases {
		got, err := cai.ArrowType(c.typestr)
		if err != nil || !arrow.TypeEqual(got, c.want) {
			t.Errorf("ArrowType(%q) = %v, %v; want %v", c.typestr, got, err, c.want)
			continue
		}
		back := c.back
		if back == "" {
			back = c.typestr
		}
		if s, err := cai.Typestr(c.want); err != nil || s != back {
			t.Errorf("Typestr(%v) = %q, %v; want %q", c.want, s, err, back)
		}
	}
	// On a little-endian host the typestrs are the familiar ones.
	if ne == "<" {
		if s, _ := cai.Typestr(arrow.PrimitiveTypes.Float64); s != "<f8" {
			t.Errorf("float64 is %q", s)
		}
	}
}

func TestTypestrRefusals(t *testing.T) {
	unsupported := []string{
		other + "i4", other + "f8", other + "u2", other + "M8[ns]", // the other byte order
		ne + "c8", ne + "c16", // complex
		ne + "f16", ne + "i16", "|V8", "|S4", ne + "U3", "|O8", // no Arrow type
		ne + "M8", ne + "M8[D]", ne + "m8[ps]", // generic or other units
	}
	for _, s := range unsupported {
		if _, err := cai.ArrowType(s); !errors.Is(err, cai.ErrUnsupported) || errors.Is(err, cai.ErrInvalid) {
			t.Errorf("ArrowType(%q): %v, want ErrUnsupported", s, err)
		}
	}
	if _, err := cai.ArrowType(other + "f8"); err == nil || !strings.Contains(err.Error(), "endian") {
		t.Errorf("the other byte order is not explained: %v", err)
	}
	invalid := []string{
		"", "f8", "<f", "=f8", "<x4", "<f0", "<f-1", "<f+8", "<fx", "|f8", "|i4", "|M8[ns]", "<b2",
		"<M4[ns]", "<M8[ns", "<f8[ns]", "<M8[]",
	}
	for _, s := range invalid {
		if _, err := cai.ArrowType(s); !errors.Is(err, cai.ErrInvalid) || !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ArrowType(%q): %v, want ErrInvalid", s, err)
		}
	}
	for _, dt := range []arrow.DataType{
		arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"},
		&arrow.Decimal128Type{Precision: 10, Scale: 2}, arrow.ListOf(arrow.PrimitiveTypes.Int32),
	} {
		if _, err := cai.Typestr(dt); !errors.Is(err, cai.ErrUnsupported) || !errors.Is(err, cdevice.ErrUnsupported) {
			t.Errorf("Typestr(%v): %v, want ErrUnsupported", dt, err)
		}
	}
}

// The JSON form is exactly the dictionary __cuda_array_interface__ returns.
func TestJSONExact(t *testing.T) {
	cases := []struct {
		d    cai.Interface
		want string
	}{
		{cai.Interface{Shape: []int64{3}, Typestr: "<f8", Data: cai.Data{Ptr: 3735928544, ReadOnly: true}, Version: 3,
			Descr: []cai.Field{{"", "<f8"}}},
			`{"shape":[3],"typestr":"<f8","data":[3735928544,true],"version":3,"strides":null,"descr":[["","<f8"]],"mask":null}`},
		{cai.Interface{Shape: []int64{2, 4}, Typestr: "|u1", Data: cai.Data{Ptr: 4096}, Version: 3, Strides: []int64{1, 2}, Stream: ptr(1)},
			`{"shape":[2,4],"typestr":"|u1","data":[4096,false],"version":3,"strides":[1,2],"mask":null,"stream":1}`},
		{cai.Interface{Shape: []int64{0}, Typestr: "<i4", Version: 3},
			`{"shape":[0],"typestr":"<i4","data":[0,false],"version":3,"strides":null,"mask":null}`},
		{cai.Interface{Shape: []int64{2}, Typestr: "<i8", Data: cai.Data{Ptr: 8192}, Version: 3, Stream: ptr(0x7f3a2c001230),
			Mask: &cai.Interface{Shape: []int64{2}, Typestr: "|b1", Data: cai.Data{Ptr: 12288, ReadOnly: true}, Version: 3}},
			`{"shape":[2],"typestr":"<i8","data":[8192,false],"version":3,"strides":null,"mask":` +
				`{"shape":[2],"typestr":"|b1","data":[12288,true],"version":3,"strides":null,"mask":null},"stream":139887823032880}`},
		{cai.Interface{Shape: []int64{}, Typestr: `<"f8`, Version: 2, Descr: []cai.Field{}},
			`{"shape":[],"typestr":"<\"f8","data":[0,false],"version":2,"strides":null,"descr":[],"mask":null}`},
	}
	for i, c := range cases {
		got, err := c.d.MarshalJSON()
		if err != nil || string(got) != c.want {
			t.Errorf("case %d:\ngot  %s %v\nwant %s", i, got, err, c.want)
			continue
		}
		// An Encoder without HTML escaping writes the same bytes, value or
		// pointer; json.Marshal escapes < and >, which reads back the same.
		for _, v := range []any{c.d, &c.d} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil || b.String() != c.want+"\n" {
				t.Errorf("case %d: Encoder: %s %v", i, b.String(), err)
			}
		}
		escaped, _ := json.Marshal(c.d)
		if r := strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(c.want); string(escaped) != r {
			t.Errorf("case %d: json.Marshal: %s", i, escaped)
		}
		var back cai.Interface
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, c.d) {
			t.Errorf("case %d: round trip %+v, %v", i, back, err)
		}
	}
}

// JSON as Python's json.dumps writes the dictionary (spaces, another key
// order, tuples as lists, extra keys, null entries) reads as it should.
func TestJSONFromPython(t *testing.T) {
	in := `{"typestr": "<f4", "shape": [2, 3], "strides": null, "descr": [["", "<f4"]],
		"stream": null, "version": 3, "data": [18446744073709551615, false], "mask": null, "extra": {"x": 1}}`
	var d cai.Interface
	err := json.Unmarshal([]byte(in), &d)
	is64 := uint64(^uintptr(0)) == math.MaxUint64
	if is64 {
		want := cai.Interface{Shape: []int64{2, 3}, Typestr: "<f4", Data: cai.Data{Ptr: ^uintptr(0)}, Version: 3,
			Descr: []cai.Field{{"", "<f4"}}}
		if err != nil || !reflect.DeepEqual(d, want) {
			t.Errorf("got %+v, %v", d, err)
		}
	} else if !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("a 64-bit pointer on a 32-bit machine: %v", err)
	}
}

func TestJSONErrors(t *testing.T) {
	const ok = `"shape":[1],"typestr":"<f8","data":[1,false],"version":3`
	cases := map[string]string{
		"null":                 `null`,
		"not an object":        `[1]`,
		"no shape":             `{"typestr":"<f8","data":[1,false],"version":3}`,
		"null shape":           `{"shape":null,"typestr":"<f8","data":[1,false],"version":3}`,
		"no typestr":           `{"shape":[1],"data":[1,false],"version":3}`,
		"no data":              `{"shape":[1],"typestr":"<f8","version":3}`,
		"null data":            `{"shape":[1],"typestr":"<f8","data":null,"version":3}`,
		"no version":           `{"shape":[1],"typestr":"<f8","data":[1,false]}`,
		"shape of floats":      `{"shape":[1.5],"typestr":"<f8","data":[1,false],"version":3}`,
		"data of one":          `{"shape":[1],"typestr":"<f8","data":[1],"version":3}`,
		"negative pointer":     `{"shape":[1],"typestr":"<f8","data":[-1,false],"version":3}`,
		"pointer over 64 bits": `{"shape":[1],"typestr":"<f8","data":[18446744073709551616,false],"version":3}`,
		"flag not a bool":      `{"shape":[1],"typestr":"<f8","data":[1,0],"version":3}`,
		"descr not pairs":      `{` + ok + `,"descr":[["<f8"]]}`,
		"stream not an int":    `{` + ok + `,"stream":"7"}`,
		"bad mask":             `{` + ok + `,"mask":{"shape":[1]}}`,
		"mask not an object":   `{` + ok + `,"mask":7}`,
		"truncated":            `{` + ok,
		"mask of a mask":       `{` + ok + `,"mask":{` + ok + `,"mask":{` + ok + `}}}`,
	}
	for name, in := range cases {
		var d cai.Interface
		if err := d.UnmarshalJSON([]byte(in)); !errors.Is(err, cai.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	for name, in := range map[string]string{
		"subarray field":   `{` + ok + `,"descr":[["x","<f8",[2]]]}`,
		"titled field":     `{` + ok + `,"descr":[[["title","x"],"<f8"]]}`,
		"nested structure": `{` + ok + `,"descr":[["x",[["a","<f4"]]]]}`,
	} {
		var d cai.Interface
		if err := d.UnmarshalJSON([]byte(in)); !errors.Is(err, cai.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
}

// The v3 stream rules.
func TestStreamKinds(t *testing.T) {
	cases := []struct {
		stream  *int64
		version int
		want    cai.StreamKind
		invalid bool
	}{
		{nil, 3, cai.NoStream, false},
		{ptr(0), 3, 0, true},
		{ptr(1), 3, cai.LegacyStream, false},
		{ptr(2), 3, cai.PerThreadStream, false},
		{ptr(3), 3, cai.HandleStream, false},
		{ptr(0x7f3a2c001230), 3, cai.HandleStream, false},
		{ptr(-1), 3, 0, true},
		{ptr(7), 2, 0, true}, // streams came with version 3
		{nil, 2, cai.NoStream, false},
	}
	for _, c := range cases {
		d := cai.Interface{Shape: []int64{1}, Typestr: "|u1", Data: cai.Data{Ptr: 1}, Version: c.version, Stream: c.stream}
		k, err := d.StreamKind()
		verr := d.Validate()
		if c.invalid {
			if !errors.Is(err, cai.ErrInvalid) || !errors.Is(verr, cai.ErrInvalid) {
				t.Errorf("stream %v: %v / %v, want ErrInvalid", d.Stream, err, verr)
			}
			continue
		}
		if err != nil || k != c.want || verr != nil {
			t.Errorf("stream %v: %v, %v, %v; want %v", d.Stream, k, err, verr, c.want)
		}
	}
	if d := (cai.Interface{Version: 3, Stream: ptr(0)}); !strings.Contains(func() string { _, err := d.StreamKind(); return err.Error() }(), "ambiguous") {
		t.Error("stream 0's refusal does not say why")
	}
	for k, s := range map[cai.StreamKind]string{cai.NoStream: "none", cai.LegacyStream: "legacy default stream",
		cai.PerThreadStream: "per-thread default stream", cai.HandleStream: "cudaStream_t"} {
		if k.String() != s {
			t.Errorf("%d: %q", int(k), k.String())
		}
	}
}

func TestValidate(t *testing.T) {
	good := func() *cai.Interface {
		return &cai.Interface{Shape: []int64{2, 3}, Typestr: "<f8", Data: cai.Data{Ptr: 4096}, Version: 3,
			Mask: &cai.Interface{Shape: []int64{2, 3}, Typestr: "|b1", Data: cai.Data{Ptr: 8192}, Version: 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{0, 1, 2} {
		d := good()
		d.Version, d.Mask.Version = v, v
		if err := d.Validate(); err != nil {
			t.Errorf("version %d: %v", v, err)
		}
	}
	zero := &cai.Interface{Shape: []int64{0, 3}, Typestr: "<f8", Version: 3}
	if err := zero.Validate(); err != nil {
		t.Errorf("zero-size with a NULL pointer: %v", err)
	}
	invalid := map[string]func(d *cai.Interface){
		"negative version":        func(d *cai.Interface) { d.Version = -1 },
		"negative dimension":      func(d *cai.Interface) { d.Shape[1] = -3 },
		"too many elements":       func(d *cai.Interface) { d.Shape = []int64{1 << 40, 1 << 40} },
		"too many bytes":          func(d *cai.Interface) { d.Shape = []int64{1 << 31, 1 << 31} },
		"bad typestr":             func(d *cai.Interface) { d.Typestr = "f8" },
		"NULL pointer":            func(d *cai.Interface) { d.Data.Ptr = 0 },
		"strides of another rank": func(d *cai.Interface) { d.Strides = []int64{8} },
		"bad descr":               func(d *cai.Interface) { d.Descr = []cai.Field{{"x", "??"}} },
		"stream 0":                func(d *cai.Interface) { d.Stream = ptr(0) },
		"mask of another shape":   func(d *cai.Interface) { d.Mask.Shape = []int64{3, 2} },
		"mask of floats":          func(d *cai.Interface) { d.Mask.Typestr = "<f4" },
		"mask of two bytes":       func(d *cai.Interface) { d.Mask.Typestr = "<u2" },
		"mask with a mask": func(d *cai.Interface) {
			d.Mask.Mask = &cai.Interface{Shape: []int64{2, 3}, Typestr: "|b1", Data: cai.Data{Ptr: 1}}
		},
		"mask with NULL pointer": func(d *cai.Interface) { d.Mask.Data.Ptr = 0 },
		"mask with stream 0":     func(d *cai.Interface) { d.Mask.Stream = ptr(0) },
	}
	for name, breakIt := range invalid {
		d := good()
		breakIt(d)
		if err := d.Validate(); !errors.Is(err, cai.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	d := good()
	d.Version = 4
	if err := d.Validate(); !errors.Is(err, cai.ErrUnsupported) {
		t.Errorf("version 4: %v, want ErrUnsupported", err)
	}
	if err := (*cai.Interface)(nil).Validate(); !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("nil: %v", err)
	}
	// The mask's errors say they are the mask's.
	d = good()
	d.Mask.Typestr = "bad"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "mask") {
		t.Errorf("mask error: %v", err)
	}
}

func TestNotCUDAIsUnsupported(t *testing.T) {
	if !errors.Is(cai.ErrNotCUDA, cai.ErrUnsupported) || !errors.Is(cai.ErrNotCUDA, cdevice.ErrUnsupported) {
		t.Error("ErrNotCUDA does not wrap ErrUnsupported")
	}
}

// Whatever the bytes, UnmarshalJSON and Validate return errors, never
// panic; what reads writes back to JSON that reads the same.
func FuzzUnmarshalJSON(f *testing.F) {
	f.Add(`{"shape":[3],"typestr":"<f8","data":[4096,true],"version":3,"strides":null,"descr":[["","<f8"]],"mask":null}`)
	f.Add(`{"shape":[2,4],"typestr":"|u1","data":[4096,false],"version":3,"strides":[1,2],"mask":{"shape":[2,4],"typestr":"|b1","data":[1,false],"version":3},"stream":1}`)
	f.Add(`{"shape":[],"typestr":"<M8[ns]","data":[0,false],"version":2}`)
	f.Fuzz(func(t *testing.T, in string) {
		var d cai.Interface
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			return
		}
		_ = d.Validate()
		_, _ = d.StreamKind()
		_, _ = cai.ArrowType(d.Typestr)
		out, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back cai.Interface
		if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("%s → %s → %+v, %v", in, out, back, err)
		}
	})
}
