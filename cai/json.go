package cai

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// MarshalJSON writes the descriptor as the dictionary that Python's
// __cuda_array_interface__ returns, JSON arrays standing for Python tuples,
// keys in this order:
//
//	{"shape":[3,4],"typestr":"<f8","data":[140245520826368,true],"version":3,
//	 "strides":null,"descr":[["","<f8"]],"mask":null,"stream":7}
//
// "strides" and "mask" are always written (null for none); "descr" is left
// out when Descr is nil and "stream" when Stream is nil (no synchronization
// needed: the interface's two spellings of none). A Python bridge turns
// "shape", "strides", "data" and each "descr" entry into tuples and the
// "mask" object into an object exposing it as its __cuda_array_interface__.
// The descriptor is written as it is; call Validate to check it first.
//
// json.Marshal of an Interface escapes '<' and '>' (as \u003c, \u003e),
// which JSON readers, Python's included, read back the same; for these
// exact bytes call MarshalJSON itself, or use a json.Encoder with
// SetEscapeHTML(false).
func (d Interface) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	d.write(&b)
	return b.Bytes(), nil
}

func (d *Interface) write(b *bytes.Buffer) {
	b.WriteString(`{"shape":`)
	writeInts(b, d.Shape, false)
	b.WriteString(`,"typestr":`)
	writeString(b, d.Typestr)
	b.WriteString(`,"data":[`)
	b.WriteString(strconv.FormatUint(uint64(d.Data.Ptr), 10))
	b.WriteString(`,` + strconv.FormatBool(d.Data.ReadOnly) + `],"version":`)
	b.WriteString(strconv.Itoa(d.Version))
	b.WriteString(`,"strides":`)
	writeInts(b, d.Strides, true)
	if d.Descr != nil {
		b.WriteString(`,"descr":[`)
		for i, f := range d.Descr {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			writeString(b, f.Name)
			b.WriteByte(',')
			writeString(b, f.Typestr)
			b.WriteByte(']')
		}
		b.WriteByte(']')
	}
	b.WriteString(`,"mask":`)
	if d.Mask == nil {
		b.WriteString("null")
	} else {
		d.Mask.write(b)
	}
	if d.Stream != nil {
		b.WriteString(`,"stream":`)
		b.WriteString(strconv.FormatInt(*d.Stream, 10))
	}
	b.WriteByte('}')
}

func writeInts(b *bytes.Buffer, v []int64, nullable bool) {
	if v == nil && nullable {
		b.WriteString("null")
		return
	}
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte(']')
}

// writeString writes s as a JSON string, '<' and '>' as they are (the
// typestrs are full of them), not as the \u003c escapes of json.Marshal.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// wire is the JSON form as read; pointers tell absent from present.
type wire struct {
	Shape   *[]int64          `json:"shape"`
	Typestr *string           `json:"typestr"`
	Data    json.RawMessage   `json:"data"`
	Version *int              `json:"version"`
	Strides []int64           `json:"strides"`
	Descr   []json.RawMessage `json:"descr"`
	Mask    json.RawMessage   `json:"mask"`
	Stream  *int64            `json:"stream"`
}

// UnmarshalJSON reads the form MarshalJSON writes. "shape", "typestr",
// "data" and "version" are required; "strides", "descr", "mask" and
// "stream" may be absent or null; other keys are ignored. Descr entries
// with a subarray shape or a (title, name) pair are refused with
// ErrUnsupported; every other malformation, and a mask with a mask of its
// own, with ErrInvalid. It checks the form only: call Validate for the
// interface's rules.
func (d *Interface) UnmarshalJSON(p []byte) error {
	if d == nil {
		return invalidf("UnmarshalJSON into a nil *Interface")
	}
	return d.unmarshal(p, 0)
}

func (d *Interface) unmarshal(p []byte, depth int) error {
	if bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
		return invalidf("the descriptor is null")
	}
	var w wire
	if err := json.Unmarshal(p, &w); err != nil {
		return invalidf("JSON: %v", err)
	}
	switch {
	case w.Shape == nil:
		return invalidf(`JSON: no "shape"`)
	case w.Typestr == nil:
		return invalidf(`JSON: no "typestr"`)
	case w.Data == nil || isNull(w.Data):
		return invalidf(`JSON: no "data"`)
	case w.Version == nil:
		return invalidf(`JSON: no "version"`)
	}
	out := Interface{Shape: *w.Shape, Typestr: *w.Typestr, Version: *w.Version, Strides: w.Strides, Stream: w.Stream}
	if out.Shape == nil {
		return invalidf(`JSON: "shape" is null`)
	}
	var data []json.RawMessage
	if err := json.Unmarshal(w.Data, &data); err != nil || len(data) != 2 {
		return invalidf(`JSON: "data" is %s, not [pointer, read-only]`, w.Data)
	}
	var ptr uint64
	if err := json.Unmarshal(data[0], &ptr); err != nil || ptr > math.MaxUint64>>(64-strconv.IntSize) {
		return invalidf(`JSON: data pointer %s is not a pointer of this machine`, data[0])
	}
	out.Data.Ptr = uintptr(ptr)
	if err := json.Unmarshal(data[1], &out.Data.ReadOnly); err != nil {
		return invalidf(`JSON: read-only flag %s is not a boolean`, data[1])
	}
	if w.Descr != nil {
		out.Descr = make([]Field, len(w.Descr))
		for i, raw := range w.Descr {
			f, err := readField(raw)
			if err != nil {
				return err
			}
			out.Descr[i] = f
		}
	}
	if w.Mask != nil && !isNull(w.Mask) {
		if depth > 0 {
			return invalidf("JSON: the mask has a mask of its own")
		}
		out.Mask = new(Interface)
		if err := out.Mask.unmarshal(w.Mask, depth+1); err != nil {
			return err
		}
	}
	*d = out
	return nil
}

func readField(raw json.RawMessage) (Field, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) < 2 {
		return Field{}, invalidf(`JSON: descr entry %s is not [name, typestr]`, raw)
	}
	var f Field
	if err := json.Unmarshal(parts[0], &f.Name); err != nil {
		return Field{}, unsupportedf(`descr entry %s: a (title, name) pair as the name`, raw)
	}
	if len(parts) > 2 {
		return Field{}, unsupportedf(`descr entry %s: subarray fields`, raw)
	}
	if err := json.Unmarshal(parts[1], &f.Typestr); err != nil {
		return Field{}, unsupportedf(`descr entry %s: nested structured fields`, raw)
	}
	return f, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
