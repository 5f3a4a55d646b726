package cdevice

import (
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

// simpleFormats maps the types whose format string takes no parameter.
// Keyed by ID rather than Go type: arrow-go implements some types (LargeList,
// unions) on value receivers, so both T and *T are DataTypes.
var simpleFormats = map[arrow.Type]string{
	arrow.NULL: "n", arrow.BOOL: "b",
	arrow.INT8: "c", arrow.UINT8: "C", arrow.INT16: "s", arrow.UINT16: "S",
	arrow.INT32: "i", arrow.UINT32: "I", arrow.INT64: "l", arrow.UINT64: "L",
	arrow.FLOAT16: "e", arrow.FLOAT32: "f", arrow.FLOAT64: "g",
	arrow.BINARY: "z", arrow.LARGE_BINARY: "Z", arrow.BINARY_VIEW: "vz",
	arrow.STRING: "u", arrow.LARGE_STRING: "U", arrow.STRING_VIEW: "vu",
	arrow.DATE32: "tdD", arrow.DATE64: "tdm",
	arrow.INTERVAL_MONTHS: "tiM", arrow.INTERVAL_DAY_TIME: "tiD", arrow.INTERVAL_MONTH_DAY_NANO: "tin",
	arrow.LIST: "+l", arrow.LARGE_LIST: "+L", arrow.LIST_VIEW: "+vl", arrow.LARGE_LIST_VIEW: "+vL",
	arrow.STRUCT: "+s", arrow.MAP: "+m", arrow.RUN_END_ENCODED: "+r",
}

// simpleTypes maps the childless formats that take no parameter.
var simpleTypes = map[string]arrow.DataType{
	"n": arrow.Null, "b": arrow.FixedWidthTypes.Boolean,
	"c": arrow.PrimitiveTypes.Int8, "C": arrow.PrimitiveTypes.Uint8,
	"s": arrow.PrimitiveTypes.Int16, "S": arrow.PrimitiveTypes.Uint16,
	"i": arrow.PrimitiveTypes.Int32, "I": arrow.PrimitiveTypes.Uint32,
	"l": arrow.PrimitiveTypes.Int64, "L": arrow.PrimitiveTypes.Uint64,
	"e": arrow.FixedWidthTypes.Float16, "f": arrow.PrimitiveTypes.Float32, "g": arrow.PrimitiveTypes.Float64,
	"z": arrow.BinaryTypes.Binary, "Z": arrow.BinaryTypes.LargeBinary, "vz": arrow.BinaryTypes.BinaryView,
	"u": arrow.BinaryTypes.String, "U": arrow.BinaryTypes.LargeString, "vu": arrow.BinaryTypes.StringView,
	"tdD": arrow.FixedWidthTypes.Date32, "tdm": arrow.FixedWidthTypes.Date64,
	"tts": arrow.FixedWidthTypes.Time32s, "ttm": arrow.FixedWidthTypes.Time32ms,
	"ttu": arrow.FixedWidthTypes.Time64us, "ttn": arrow.FixedWidthTypes.Time64ns,
	"tDs": arrow.FixedWidthTypes.Duration_s, "tDm": arrow.FixedWidthTypes.Duration_ms,
	"tDu": arrow.FixedWidthTypes.Duration_us, "tDn": arrow.FixedWidthTypes.Duration_ns,
	"tiM": arrow.FixedWidthTypes.MonthInterval, "tiD": arrow.FixedWidthTypes.DayTimeInterval,
	"tin": arrow.FixedWidthTypes.MonthDayNanoInterval,
}

// unitLetters is the unit suffix shared by time, timestamp and duration formats.
var unitLetters = [...]byte{arrow.Second: 's', arrow.Millisecond: 'm', arrow.Microsecond: 'u', arrow.Nanosecond: 'n'}

func unitOf(c byte) (arrow.TimeUnit, bool) {
	i := slices.Index(unitLetters[:], c)
	return arrow.TimeUnit(i), i >= 0
}

// decimalMaxPrecision is the largest precision each decimal width can hold
// (Arrow C++ rejects larger ones on import, so we do too, in both directions).
var decimalMaxPrecision = map[int]int32{32: 9, 64: 18, 128: 38, 256: 76}

// formatOf returns the Arrow C format string of dt. For a dictionary it is the
// index type's format and for an extension type the storage type's: the
// caller writes the dictionary schema and the extension metadata.
func formatOf(dt arrow.DataType) (string, error) {
	if dt == nil {
		return "", invalidf("nil data type")
	}
	if f, ok := simpleFormats[dt.ID()]; ok {
		return f, nil
	}
	switch dt.ID() {
	case arrow.EXTENSION:
		if ext, ok := dt.(arrow.ExtensionType); ok {
			if ext.StorageType() == nil || ext.StorageType().ID() == arrow.EXTENSION {
				return "", invalidf("extension type %s: bad storage type", ext.ExtensionName())
			}
			return formatOf(ext.StorageType())
		}
	case arrow.DICTIONARY:
		if d, ok := dt.(*arrow.DictionaryType); ok {
			if d.IndexType == nil || !arrow.IsInteger(d.IndexType.ID()) {
				return "", invalidf("dictionary index type %v is not an integer", d.IndexType)
			}
			return formatOf(d.IndexType)
		}
	case arrow.TIME32, arrow.TIME64, arrow.DURATION:
		t, ok := dt.(arrow.TemporalWithUnit)
		if !ok {
			break
		}
		u := t.TimeUnit()
		if u > arrow.Nanosecond {
			return "", invalidf("%s: bad time unit %d", dt, u)
		}
		switch {
		case dt.ID() == arrow.DURATION:
			return "tD" + string(unitLetters[u]), nil
		case (dt.ID() == arrow.TIME32) != (u <= arrow.Millisecond):
			return "", invalidf("%s cannot have unit %s", dt.Name(), u)
		}
		return "tt" + string(unitLetters[u]), nil
	case arrow.TIMESTAMP:
		t, ok := dt.(*arrow.TimestampType)
		if !ok {
			break
		}
		if t.Unit > arrow.Nanosecond {
			return "", invalidf("timestamp: bad time unit %d", t.Unit)
		}
		// The format is a C string: a NUL would silently cut the zone.
		if strings.IndexByte(t.TimeZone, 0) >= 0 {
			return "", invalidf("timestamp time zone %q contains NUL", t.TimeZone)
		}
		return "ts" + string(unitLetters[t.Unit]) + ":" + t.TimeZone, nil
	case arrow.FIXED_SIZE_BINARY:
		t, ok := dt.(*arrow.FixedSizeBinaryType)
		if !ok {
			break
		}
		if t.ByteWidth < 0 {
			return "", invalidf("fixed_size_binary: negative width %d", t.ByteWidth)
		}
		return "w:" + strconv.Itoa(t.ByteWidth), nil
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		t, ok := dt.(arrow.DecimalType)
		if !ok {
			break
		}
		bits := t.BitWidth()
		if p := t.GetPrecision(); p < 1 || p > decimalMaxPrecision[bits] {
			return "", invalidf("%s: precision %d out of range", dt, p)
		}
		f := "d:" + strconv.Itoa(int(t.GetPrecision())) + "," + strconv.Itoa(int(t.GetScale()))
		if bits != 128 { // 128 is the default width and is written without it, as Arrow C++ does
			f += "," + strconv.Itoa(bits)
		}
		return f, nil
	case arrow.FIXED_SIZE_LIST:
		if t, ok := dt.(*arrow.FixedSizeListType); ok {
			return "+w:" + strconv.Itoa(int(t.Len())), nil
		}
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		if t, ok := dt.(arrow.UnionType); ok {
			f := "+ud:"
			if dt.ID() == arrow.SPARSE_UNION {
				f = "+us:"
			}
			for i, c := range t.TypeCodes() {
				if i > 0 {
					f += ","
				}
				f += strconv.Itoa(int(c))
			}
			return f, nil
		}
	}
	return "", unsupportedf("data type %s (id %d)", dt, dt.ID())
}

// parseInt32 parses a base-10 int32 as Arrow C++ does: an optional '-' and
// digits, nothing else (strconv alone would also take a leading '+').
func parseInt32(s string) (int32, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || s[0] == '+' {
		return 0, false
	}
	return int32(v), true
}

// typeFromFormat builds the data type that format describes. children are
// the already-imported child fields in order; flags is ArrowSchema.flags.
// Dictionary and extension wrapping are the caller's job.
func typeFromFormat(format string, children []arrow.Field, flags int64) (arrow.DataType, error) {
	// Formats come from C strings; a NUL could only be a caller's bug and would
	// not survive formatOf's way back.
	if strings.IndexByte(format, 0) >= 0 {
		return nil, invalidf("format %q contains NUL", format)
	}
	// Every arrow-go constructor below panics on a nil child type.
	for i, c := range children {
		if c.Type == nil {
			return nil, invalidf("format %q: child %d has no type", format, i)
		}
	}
	if want := formatChildCount(format); want >= 0 && len(children) != want {
		return nil, invalidf("format %q needs %d children, got %d", format, want, len(children))
	}

	if dt, ok := simpleTypes[format]; ok {
		return dt, nil
	}
	switch format {
	case "+l":
		return arrow.ListOfField(children[0]), nil
	case "+L":
		return arrow.LargeListOfField(children[0]), nil
	case "+vl":
		return arrow.ListViewOfField(children[0]), nil
	case "+vL":
		return arrow.LargeListViewOfField(children[0]), nil
	case "+s":
		return arrow.StructOf(children...), nil
	case "+m":
		return mapFromChildren(children, flags)
	case "+r":
		re, vals := children[0], children[1]
		switch re.Type.ID() {
		case arrow.INT16, arrow.INT32, arrow.INT64:
		default:
			return nil, invalidf("run-end encoded: run_ends type %s is not int16/32/64", re.Type)
		}
		if vals.Type.ID() == arrow.RUN_END_ENCODED {
			return nil, invalidf("run-end encoded: values cannot be run-end encoded")
		}
		t := arrow.RunEndEncodedOf(re.Type, vals.Type)
		t.ValueNullable = vals.Nullable
		return t, nil
	}

	key, val, hasColon := strings.Cut(format, ":")
	if !hasColon {
		return nil, invalidf("unknown format %q", format)
	}
	switch key {
	case "d":
		return decimalFromFormat(format, val)
	case "w":
		n, ok := parseInt32(val)
		if !ok || n <= 0 {
			// arrow-go's own importer refuses width 0 too.
			return nil, invalidf("format %q: fixed-size binary byte width must be positive", format)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
	case "tss", "tsm", "tsu", "tsn":
		// Everything after the colon is the zone, possibly empty.
		u, _ := unitOf(key[2])
		return &arrow.TimestampType{Unit: u, TimeZone: val}, nil
	case "+w":
		n, ok := parseInt32(val)
		if !ok || n < 0 {
			return nil, invalidf("format %q: bad list size", format)
		}
		if n == 0 {
			// Valid Arrow (C++ accepts it), but arrow-go's constructor panics on 0.
			return nil, unsupportedf("format %q: arrow-go has no zero-size fixed-size list", format)
		}
		return arrow.FixedSizeListOfField(n, children[0]), nil
	case "+ud", "+us":
		return unionFromFormat(format, val, key == "+us", children)
	}
	return nil, invalidf("unknown format %q", format)
}

// formatChildCount returns how many children format allows, -1 for any
// number (struct). It reads only the format's shape, so that the schema
// importer can check ArrowSchema.n_children before it walks that many
// children pointers: 1 for lists, maps and fixed-size lists, 2 for run-end
// encoded, one per listed type code for unions, 0 for everything else
// (malformed formats included: typeFromFormat refuses them, but a lying
// count must not be walked first).
func formatChildCount(format string) int {
	switch format {
	case "+s":
		return -1
	case "+l", "+L", "+vl", "+vL", "+m":
		return 1
	case "+r":
		return 2
	}
	key, val, _ := strings.Cut(format, ":")
	switch key {
	case "+w":
		return 1
	case "+ud", "+us":
		if val == "" {
			return 0
		}
		return strings.Count(val, ",") + 1
	}
	return 0
}

// decimalFromFormat parses the "P,S[,N]" of a "d:" format.
func decimalFromFormat(format, params string) (arrow.DataType, error) {
	parts := strings.Split(params, ",")
	if len(parts) != 2 && len(parts) != 3 {
		return nil, invalidf("invalid decimal spec '%s': wrong number of properties (want precision,scale[,bitwidth])", format)
	}
	var nums [3]int32
	nums[2] = 128 // bit width defaults to 128
	for i, p := range parts {
		v, ok := parseInt32(p)
		if !ok {
			return nil, invalidf("could not parse decimal %s in '%s': %q is not a 32-bit integer", [3]string{"precision", "scale", "bitwidth"}[i], format, p)
		}
		nums[i] = v
	}
	prec, scale, bits := nums[0], nums[1], int(nums[2])
	maxPrec, ok := decimalMaxPrecision[bits]
	if !ok {
		return nil, invalidf("unsupported decimal bitwidth, got '%s': %d is not 32, 64, 128 or 256", format, bits)
	}
	if prec < 1 || prec > maxPrec {
		return nil, invalidf("format %q: decimal%d precision must be in 1..%d", format, bits, maxPrec)
	}
	switch bits {
	case 32:
		return &arrow.Decimal32Type{Precision: prec, Scale: scale}, nil
	case 64:
		return &arrow.Decimal64Type{Precision: prec, Scale: scale}, nil
	case 128:
		return &arrow.Decimal128Type{Precision: prec, Scale: scale}, nil
	}
	return &arrow.Decimal256Type{Precision: prec, Scale: scale}, nil
}

// unionFromFormat parses the type codes "I,J,..." of a union format.
func unionFromFormat(format, codesStr string, sparse bool, children []arrow.Field) (arrow.DataType, error) {
	var codes []arrow.UnionTypeCode
	var seen [int(arrow.MaxUnionTypeCode) + 1]bool
	if codesStr != "" { // "+us:" is the empty union
		for s := range strings.SplitSeq(codesStr, ",") {
			c, ok := parseInt32(s)
			if !ok || c < 0 || c > int32(arrow.MaxUnionTypeCode) {
				return nil, invalidf("format %q: bad union type code %q (want 0..127)", format, s)
			}
			if seen[c] {
				return nil, invalidf("format %q: duplicate union type code %d", format, c)
			}
			seen[c] = true
			codes = append(codes, arrow.UnionTypeCode(c))
		}
	}
	// arrow-go keeps the slice it is given: hand it a copy the caller cannot alias.
	fields := slices.Clone(children)
	if sparse {
		return arrow.SparseUnionOf(fields, codes), nil
	}
	return arrow.DenseUnionOf(fields, codes), nil
}

// mapFromChildren builds a map from its single entries child. arrow-go fixes
// the entries/key/value names and makes the key non-nullable whatever the
// producer said (as Arrow C++ does on import, it renames them); the key and
// value metadata and the value's nullability are kept.
func mapFromChildren(children []arrow.Field, flags int64) (arrow.DataType, error) {
	st, ok := children[0].Type.(*arrow.StructType)
	if !ok || st.NumFields() != 2 {
		return nil, invalidf("map child must be a struct of 2 fields, got %s", children[0].Type)
	}
	k, v := st.Field(0), st.Field(1)
	if k.Type == nil || v.Type == nil {
		return nil, invalidf("map key or value has no type")
	}
	m := arrow.MapOfWithMetadata(k.Type, k.Metadata, v.Type, v.Metadata)
	m.SetItemNullable(v.Nullable)
	m.KeysSorted = flags&abi.FlagMapKeysSorted != 0
	return m, nil
}
