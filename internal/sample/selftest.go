package sample

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	// The sample names a zone; Windows without Go, Alpine, distroless and -trimpath builds have no zone database: whoever builds the sample carries one.
	_ "time/tzdata"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Rows is the number of rows of Batch(mem, 1), the sample.
const Rows = 8

// A column is one column of the sample: its type and its values as
// arrow-go's JSON (Rows of them, or more when skip says how many to slice
// off the front).
type column struct {
	name     string
	typ      arrow.DataType
	nullable bool
	json     string
	skip     int // values sliced off the front: a column whose offset is not 0
}

// columns covers every type family the library supports, most with
// nulls. Strings longer than 12 bytes put view types' data in variadic
// buffers; repeated values make real runs and dictionary reuse.
func columns() []column {
	i32 := arrow.PrimitiveTypes.Int32
	utf8 := arrow.BinaryTypes.String
	cols := []column{
		{"null", arrow.Null, true, `[null, null, null, null, null, null, null, null]`, 0},
		{"bool", arrow.FixedWidthTypes.Boolean, true, `[true, false, null, true, true, false, null, false]`, 0},
		{"int8", arrow.PrimitiveTypes.Int8, true, `[-128, -1, 0, null, 1, 127, 5, -5]`, 0},
		{"int16", arrow.PrimitiveTypes.Int16, true, `[-32768, -1, 0, 1, null, 32767, 300, -300]`, 0},
		{"int32", i32, true, `[-2147483648, -1, 0, 1, 2147483647, null, 70000, -70000]`, 0},
		{"int64", arrow.PrimitiveTypes.Int64, true, `[-9223372036854775808, -1, 0, 1, 9223372036854775807, 5000000000, null, -5000000000]`, 0},
		{"uint8", arrow.PrimitiveTypes.Uint8, true, `[0, 1, 255, null, 128, 7, 8, 9]`, 0},
		{"uint16", arrow.PrimitiveTypes.Uint16, true, `[0, 1, 65535, 2, null, 3, 4, 5]`, 0},
		{"uint32", arrow.PrimitiveTypes.Uint32, true, `[0, 1, 4294967295, 2, 3, null, 4, 5]`, 0},
		{"uint64", arrow.PrimitiveTypes.Uint64, true, `[0, 1, 18446744073709551615, 2, 3, 4, null, 5]`, 0},
		{"float16", arrow.FixedWidthTypes.Float16, true, `[0, 1.5, -2.25, null, 65504, -0.5, 3, 4]`, 0},
		{"float32", arrow.PrimitiveTypes.Float32, true, `[0, 1.5, -2.25, 3.4e38, null, 1e-20, 7, 8]`, 0},
		{"float64", arrow.PrimitiveTypes.Float64, true, `[0, 1.5, -2.25, 1.7e308, 5e-324, null, 7, 8]`, 0},
		{"decimal32", &arrow.Decimal32Type{Precision: 9, Scale: 2}, true, `["1234567.89", "-0.01", null, "0", "1", "2", "3", "4"]`, 0},
		{"decimal64", &arrow.Decimal64Type{Precision: 18, Scale: 3}, true, `["123456789012345.678", "-0.001", "0", null, "1", "2", "3", "4"]`, 0},
		{"decimal128", &arrow.Decimal128Type{Precision: 38, Scale: 10}, true, `["1234567890123456789012345678.0123456789", "-1.5", "0", "1", null, "2", "3", "4"]`, 0},
		{"decimal256", &arrow.Decimal256Type{Precision: 76, Scale: 20}, true, `["12345678901234567890123456789012345678901234567890.12345678901234567890", "-1.5", "0", "1", "2", null, "3", "4"]`, 0},
		{"date32", arrow.FixedWidthTypes.Date32, true, `["1970-01-01", "2024-02-29", null, "1900-12-31", "2038-01-19", "2000-01-01", "1999-12-31", "2100-06-15"]`, 0},
		{"date64", arrow.FixedWidthTypes.Date64, true, `["1970-01-01", "2024-02-29", "1900-12-31", null, "2038-01-19", "2000-01-01", "1999-12-31", "2100-06-15"]`, 0},
		{"time32_s", arrow.FixedWidthTypes.Time32s, true, `["00:00:00", "23:59:59", null, "12:30:00", "01:02:03", "04:05:06", "07:08:09", "10:11:12"]`, 0},
		{"time32_ms", arrow.FixedWidthTypes.Time32ms, true, `["00:00:00.000", "23:59:59.999", "12:30:00.5", null, "01:02:03", "04:05:06", "07:08:09", "10:11:12"]`, 0},
		{"time64_us", arrow.FixedWidthTypes.Time64us, true, `["00:00:00", "23:59:59.999999", "12:30:00.5", "01:02:03", null, "04:05:06", "07:08:09", "10:11:12"]`, 0},
		{"time64_ns", arrow.FixedWidthTypes.Time64ns, true, `["00:00:00", "23:59:59.999999999", "12:30:00.5", "01:02:03", "04:05:06", null, "07:08:09", "10:11:12"]`, 0},
		{"timestamp_s", &arrow.TimestampType{Unit: arrow.Second}, true, `["1970-01-01T00:00:00", "2024-02-29T12:34:56", null, "1900-01-01T00:00:00", "2038-01-19T03:14:08", "2000-01-01T00:00:00", "2001-01-01T00:00:00", "2002-01-01T00:00:00"]`, 0},
		{"timestamp_ms_utc", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, true, `["1970-01-01T00:00:00Z", "2024-02-29T12:34:56.789Z", "1900-01-01T00:00:00Z", null, "2038-01-19T03:14:08Z", "2000-01-01T00:00:00Z", "2001-01-01T00:00:00Z", "2002-01-01T00:00:00Z"]`, 0},
		{"timestamp_us_new_york", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, true, `["1970-01-01T00:00:00Z", "2024-02-29T12:34:56.789012Z", "1900-01-01T00:00:00Z", "2038-01-19T03:14:08Z", null, "2000-01-01T00:00:00Z", "2001-01-01T00:00:00Z", "2002-01-01T00:00:00Z"]`, 0},
		{"timestamp_ns_offset", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "+05:30"}, true, `["1970-01-01T00:00:00Z", "2024-02-29T12:34:56.789012345Z", "1900-01-01T00:00:00Z", "2038-01-19T03:14:08Z", "2000-01-01T00:00:00Z", null, "2001-01-01T00:00:00Z", "2002-01-01T00:00:00Z"]`, 0},
		{"duration_s", arrow.FixedWidthTypes.Duration_s, true, `[0, 1, -1, null, 86400, 2, 3, 4]`, 0},
		{"duration_ms", arrow.FixedWidthTypes.Duration_ms, true, `[0, 1, -1, 86400000, null, 2, 3, 4]`, 0},
		{"duration_us", arrow.FixedWidthTypes.Duration_us, true, `[0, 1, -1, 86400000000, 2, null, 3, 4]`, 0},
		{"duration_ns", arrow.FixedWidthTypes.Duration_ns, true, `[0, 1, -1, 86400000000000, 2, 3, null, 4]`, 0},
		{"interval_months", arrow.FixedWidthTypes.MonthInterval, true, `[{"months": 0}, {"months": 1}, {"months": -1}, null, {"months": 12}, {"months": 2}, {"months": 3}, {"months": 4}]`, 0},
		{"interval_day_time", arrow.FixedWidthTypes.DayTimeInterval, true, `[{"days": 0, "milliseconds": 0}, {"days": 1, "milliseconds": -1}, null, {"days": -30, "milliseconds": 86399999}, {"days": 2, "milliseconds": 2}, {"days": 3, "milliseconds": 3}, {"days": 4, "milliseconds": 4}, {"days": 5, "milliseconds": 5}]`, 0},
		{"interval_month_day_nano", arrow.FixedWidthTypes.MonthDayNanoInterval, true, `[{"months": 0, "days": 0, "nanoseconds": 0}, {"months": 1, "days": -1, "nanoseconds": 1}, {"months": -12, "days": 30, "nanoseconds": -86400000000000}, null, {"months": 2, "days": 2, "nanoseconds": 2}, {"months": 3, "days": 3, "nanoseconds": 3}, {"months": 4, "days": 4, "nanoseconds": 4}, {"months": 5, "days": 5, "nanoseconds": 5}]`, 0},
		{"utf8", utf8, true, `["", "a", null, "héllo wörld", "a string longer than twelve bytes", "x", "y", "z"]`, 0},
		{"large_utf8", arrow.BinaryTypes.LargeString, true, `["", "b", "ünïcödé", null, "another string longer than twelve bytes", "x", "y", "z"]`, 0},
		{"binary", arrow.BinaryTypes.Binary, true, `["", "AAECAw==", null, "/w==", "AAAAAAAAAAAAAAAAAAAAAAAA", "AQ==", "Ag==", "Aw=="]`, 0},
		{"large_binary", arrow.BinaryTypes.LargeBinary, true, `["", "AAECAw==", "/w==", null, "AAAAAAAAAAAAAAAAAAAAAAAA", "AQ==", "Ag==", "Aw=="]`, 0},
		{"utf8_view", arrow.BinaryTypes.StringView, true, `["", "short", null, "a string view longer than twelve bytes", "twelve bytes", "thirteen bytes", "y", "another long string in a variadic buffer"]`, 0},
		{"binary_view", arrow.BinaryTypes.BinaryView, true, `["", "AAECAw==", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", null, "/w==", "AQIDBAUGBwgJCgsMDQ4PEA==", "Ag==", "Aw=="]`, 0},
		{"fixed_size_binary", &arrow.FixedSizeBinaryType{ByteWidth: 5}, true, `["AAECAwQ=", null, "//////8=", "AAAAAAA=", "AQEBAQE=", "AgICAgI=", "AwMDAwM=", "BAQEBAQ="]`, 0},
		{"list", arrow.ListOf(i32), true, `[[1, 2, 3], [], null, [null], [4, null, 5], [6], [7, 8], [9]]`, 0},
		{"large_list", arrow.LargeListOf(utf8), true, `[["a", "b"], null, [], ["a string longer than twelve bytes", null], ["c"], ["d", "e", "f"], [""], ["g"]]`, 0},
		{"fixed_size_list", arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16), true, `[[1, 2, 3], null, [4, null, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15], [16, 17, 18], [19, 20, 21]]`, 0},
		{"list_view", arrow.ListViewOf(i32), true, `[[1, 2], [], null, [3, null, 4], [5], [6, 7, 8], [9], [10, 11]]`, 0},
		{"large_list_view", arrow.LargeListViewOf(arrow.PrimitiveTypes.Float64), true, `[[1.5], null, [], [2.5, null], [3.5, 4.5, 5.5], [6.5], [7.5], [8.5]]`, 0},
		{"struct", arrow.StructOf(
			arrow.Field{Name: "a", Type: i32, Nullable: true},
			arrow.Field{Name: "b", Type: utf8, Nullable: true},
			arrow.Field{Name: "c", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		), true, `[{"a": 1, "b": "x", "c": [1.5]}, null, {"a": null, "b": "a string longer than twelve bytes", "c": []}, {"a": 3, "b": null, "c": null}, {"a": 4, "b": "y", "c": [2.5, 3.5]}, {"a": 5, "b": "z", "c": [4.5]}, {"a": 6, "b": "", "c": [5.5]}, {"a": 7, "b": "w", "c": [6.5]}]`, 0},
		{"map", arrow.MapOf(utf8, arrow.PrimitiveTypes.Int64), true, `[[{"key": "a", "value": 1}, {"key": "b", "value": null}], null, [], [{"key": "c", "value": 3}], [{"key": "d", "value": 4}, {"key": "e", "value": 5}, {"key": "f", "value": 6}], [{"key": "g", "value": 7}], [{"key": "h", "value": 8}], [{"key": "i", "value": 9}]]`, 0},
		{"sparse_union", arrow.SparseUnionOf([]arrow.Field{
			{Name: "i", Type: i32, Nullable: true},
			{Name: "s", Type: utf8, Nullable: true},
		}, []arrow.UnionTypeCode{3, 7}), true, `[[3, 1], [7, "a"], [3, null], [7, "a string longer than twelve bytes"], [3, 5], [7, null], [3, 7], [7, "z"]]`, 0},
		{"dense_union", arrow.DenseUnionOf([]arrow.Field{
			{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "l", Type: arrow.ListOf(i32), Nullable: true},
		}, []arrow.UnionTypeCode{0, 5}), true, `[[0, 1.5], [5, [1, 2]], [5, null], [0, null], [0, 2.5], [5, []], [5, [3]], [0, 3.5]]`, 0},
		{"dictionary_utf8", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: utf8}, true, `["red", "green", null, "red", "blue", "a dictionary value longer than twelve bytes", "green", "red"]`, 0},
		{"dictionary_int64_ordered", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint32, ValueType: arrow.PrimitiveTypes.Int64, Ordered: true}, true, `[10, 20, 10, null, 30, 20, 10, 40]`, 0},
		{"list_of_dictionary", arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: utf8}), true, `[["a", "b"], null, [], ["a", null], ["c"], ["b", "b"], ["a"], ["d"]]`, 0},
		{"run_end_encoded", arrow.RunEndEncodedOf(i32, utf8), true, `["a", "a", "a", null, null, "a string longer than twelve bytes", "b", "b"]`, 0},
		{"run_end_encoded_int64", arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64), true, `[1.5, 1.5, 2.5, 2.5, 2.5, null, 3.5, 3.5]`, 0},

		{"extension_label", labelType, true, `["a", null, "an extension value longer than twelve bytes", "", "b", "c", "d", "e"]`, 0},
		{"extension_code", codeType, true, `[1, 2, null, -3, 4, 5, 6, 7]`, 0},

		// Columns that are slices of longer arrays (offset 3 into them).
		{"sliced_int32", i32, true, `[100, 200, 300, 1, null, 3, 4, 5, 6, 7, 8, 900]`, 3},
		{"sliced_utf8", utf8, true, `["skipped", "skipped too", "skipped three", "a", null, "a string longer than twelve bytes", "d", "e", "f", "g", "h", "after"]`, 3},
		{"sliced_bool", arrow.FixedWidthTypes.Boolean, true, `[true, true, false, true, null, false, false, true, true, false, true, true]`, 3},
		{"sliced_list", arrow.ListOf(i32), true, `[[0], [0, 0], null, [1], [], null, [2, 3], [4], [5, null], [6], [7], [99]]`, 3},
		{"sliced_struct", arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.BinaryTypes.StringView, Nullable: true},
		), true, `[{"x": 0, "y": "s"}, null, {"x": 0, "y": "s"}, {"x": 1, "y": "one"}, null, {"x": null, "y": "a string view longer than twelve bytes"}, {"x": 4, "y": null}, {"x": 5, "y": "five"}, {"x": 6, "y": "six"}, {"x": 7, "y": "seven"}, {"x": 8, "y": "eight"}, {"x": 9, "y": "nine"}]`, 3},
		{"sliced_dense_union", arrow.DenseUnionOf([]arrow.Field{
			{Name: "i", Type: i32, Nullable: true},
			{Name: "s", Type: utf8, Nullable: true},
		}, []arrow.UnionTypeCode{0, 1}), true, `[[0, 9], [1, "skip"], [0, 8], [0, 1], [1, "b"], [1, null], [0, null], [1, "a string longer than twelve bytes"], [0, 5], [0, 6], [1, "g"], [1, "after"]]`, 3},
		{"sliced_run_end_encoded", arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int16, i32), true, `[9, 9, 9, 9, 1, 1, null, 2, 2, 2, 3, 3]`, 3},
		{"sliced_dictionary", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: utf8}, true, `["zero", "one", "two", "one", null, "three", "one", "four", "three", "one", "zero", "five"]`, 3},
	}
	return cols
}

// Batch builds the sample that `cdevice selftest` round trips through the
// C interfaces: a column of every type family (see columns), their values
// repeated repeat times (Rows × repeat rows), with memory from mem, and
// schema and field metadata that a round trip must keep. The types of its
// extension columns are registered with arrow-go, so imports rebuild them.
// The caller releases it.
func Batch(mem memory.Allocator, repeat int) (arrow.RecordBatch, error) {
	cols := columns()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, 0, len(cols))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	rows := Rows * repeat
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
		if c.skip > 0 {
			fields[i].Metadata = arrow.NewMetadata([]string{"cdevice.selftest.sliced"}, []string{fmt.Sprint(c.skip)})
		}
		js, err := repeatJSON(c, repeat)
		if err != nil {
			return nil, fmt.Errorf("sample column %s (%s): %w", c.name, c.typ, err)
		}
		a, err := fromJSON(mem, c.typ, js)
		if err != nil {
			return nil, fmt.Errorf("sample column %s (%s): %w", c.name, c.typ, err)
		}
		if c.skip > 0 {
			s := array.NewSlice(a, int64(c.skip), int64(c.skip+rows))
			a.Release()
			a = s
		}
		arrs = append(arrs, a)
		if a.Len() != rows {
			return nil, fmt.Errorf("sample column %s has %d rows, want %d", c.name, a.Len(), rows)
		}
	}
	md := arrow.NewMetadata([]string{"cdevice.selftest", "purpose"}, []string{"sample batch", "every type family through the C interfaces"})
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), arrs, int64(rows)), nil
}

// Batches builds the batches that `cdevice selftest` round trips, in this
// order, all with Batch's schema and memory from mem: the sample,
// Batch(mem, 1); a slice of it (its rows from 2 on: every column at an
// offset); a slice of Batch(mem, 64) (504 rows from row 5: bitmaps over
// many bytes, offsets that are not a multiple of 8); an Empty one (buffers
// of size 0); and 5 rows of Nulls. The caller releases each.
func Batches(mem memory.Allocator) ([]arrow.RecordBatch, error) {
	rec, err := Batch(mem, 1)
	if err != nil {
		return nil, err
	}
	long, err := Batch(mem, 64)
	if err != nil {
		rec.Release()
		return nil, err
	}
	defer long.Release()
	return []arrow.RecordBatch{rec, rec.NewSlice(2, Rows), long.NewSlice(5, long.NumRows()-3), Empty(mem, rec.Schema()), Nulls(mem, rec.Schema(), 5)}, nil
}

// repeatJSON repeats the Rows values of c (those after the skipped
// ones) n times, keeping the values before and after them.
func repeatJSON(c column, n int) (string, error) {
	if n == 1 {
		return c.json, nil
	}
	var vals []json.RawMessage
	if err := json.Unmarshal([]byte(c.json), &vals); err != nil {
		return "", err
	}
	if len(vals) < c.skip+Rows {
		return "", fmt.Errorf("%d values, want at least %d", len(vals), c.skip+Rows)
	}
	out := append([]json.RawMessage{}, vals[:c.skip]...)
	for range n {
		out = append(out, vals[c.skip:c.skip+Rows]...)
	}
	out = append(out, vals[c.skip+Rows:]...)
	b, err := json.Marshal(out)
	return string(b), err
}

// fromJSON is array.FromJSON, except that decimal128 and decimal256 values
// are parsed here: arrow-go's decimal128/256.FromBigInt read big.Int's words
// as 64-bit, so on 32-bit targets (386, arm) they build wrong values and
// decimal256 panics (index out of range [4] with length 4).
func fromJSON(mem memory.Allocator, typ arrow.DataType, js string) (arrow.Array, error) {
	var width int
	switch typ.ID() {
	case arrow.DECIMAL128:
		width = 16
	case arrow.DECIMAL256:
		width = 32
	default:
		a, _, err := array.FromJSON(mem, typ, strings.NewReader(js))
		return a, err
	}
	var vals []*string
	if err := json.Unmarshal([]byte(js), &vals); err != nil {
		return nil, fmt.Errorf("want a JSON array of decimal strings and nulls: %w", err)
	}
	dt := typ.(arrow.DecimalType)
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		limbs, err := decimalLimbs(*v, dt.GetPrecision(), dt.GetScale(), width)
		if err != nil {
			return nil, err
		}
		if width == 16 {
			b.(*array.Decimal128Builder).Append(decimal128.New(int64(limbs[0]), limbs[1]))
		} else {
			b.(*array.Decimal256Builder).Append(decimal256.New(limbs[0], limbs[1], limbs[2], limbs[3]))
		}
	}
	return b.NewArray(), nil
}

// decimalLimbs returns the decimal string s at scale as a width-byte two's
// complement integer in 64-bit limbs, most significant first. It goes
// through bytes, never big.Word, so it is the same on every word size.
func decimalLimbs(s string, prec, scale int32, width int) ([]uint64, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal number", s)
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	r.Mul(r, new(big.Rat).SetInt(pow))
	if !r.IsInt() {
		return nil, fmt.Errorf("%q has more than %d digits after the point", s, scale)
	}
	v := r.Num()
	if limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil); new(big.Int).Abs(v).Cmp(limit) >= 0 {
		return nil, fmt.Errorf("%q does not fit in precision %d", s, prec)
	}
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*width)))
	}
	buf := v.FillBytes(make([]byte, width))
	limbs := make([]uint64, width/8)
	for i := range limbs {
		limbs[i] = binary.BigEndian.Uint64(buf[8*i:])
	}
	return limbs, nil
}

// Empty is a batch of schema sc with no rows, as builders make it (buffers
// of size 0). The caller releases it.
func Empty(mem memory.Allocator, sc *arrow.Schema) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	return b.NewRecordBatch()
}

// Nulls is a batch of schema sc with rows rows, every value null (as far
// as each type can say so: unions and run-end encoding have no validity
// bitmap of their own). The caller releases it.
func Nulls(mem memory.Allocator, sc *arrow.Schema, rows int) arrow.RecordBatch {
	arrs := make([]arrow.Array, sc.NumFields())
	for i, f := range sc.Fields() {
		arrs[i] = array.MakeArrayOfNull(mem, f.Type, rows)
	}
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	return array.NewRecordBatch(sc, arrs, int64(rows))
}

// extension is an extension type of the sample's own (arrow-go's
// canonical ones live in a package with dependencies of its own): a name and
// a storage type, registered so that imports rebuild it from the
// ARROW:extension:name metadata.
type extension struct {
	arrow.ExtensionBase
	name string
}

// extensionArray is the array type of extension. Its values
// read as its storage's (ExtensionArrayBase's ValueStr panics).
type extensionArray struct {
	array.ExtensionArrayBase
}

func (a *extensionArray) ValueStr(i int) string { return a.Storage().ValueStr(i) }

func (*extension) ArrayType() reflect.Type { return reflect.TypeOf(extensionArray{}) }
func (e *extension) ExtensionName() string { return e.name }
func (e *extension) Serialize() string     { return "selftest" }
func (e *extension) String() string        { return "extension<" + e.name + ">" }
func (e *extension) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == e.name && arrow.TypeEqual(e.Storage, o.StorageType())
}

func (e *extension) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	if !arrow.TypeEqual(storage, e.Storage) || data != "selftest" {
		return nil, fmt.Errorf("%s: storage %s, metadata %q", e.name, storage, data)
	}
	return e, nil
}

var (
	labelType = &extension{ExtensionBase: arrow.ExtensionBase{Storage: arrow.BinaryTypes.String}, name: "cdevice.selftest.label"}
	codeType  = &extension{ExtensionBase: arrow.ExtensionBase{Storage: arrow.PrimitiveTypes.Int32}, name: "cdevice.selftest.code"}
)

func init() {
	for _, t := range []arrow.ExtensionType{labelType, codeType} {
		if err := arrow.RegisterExtensionType(t); err != nil {
			panic(err)
		}
	}
}
