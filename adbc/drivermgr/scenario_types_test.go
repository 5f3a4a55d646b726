package drivermgr_test

// The "types" scenario's tables: every type each database has, the Arrow
// type its driver reads it as, and how an Arrow value compares with the
// text the database renders for it. One row per type; what a driver does
// that is not what one would expect is said in the row's comment.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// scType is one column type of one database.
type scType struct {
	sql    string   // the column's type in CREATE TABLE
	setup  []string // statements run before the table is made (a user-defined type)
	values []string // SQL literals, one row each; the scenario adds a NULL row
	// arrow is the Arrow type the driver reads the column as
	// (DataType.String(), then "[extension name]" where the field's
	// metadata names one); a trailing * matches any rest (a time zone that
	// is the machine's).
	arrow string
	// text renders the column v as text in SQL; "" is CAST(v AS TEXT).
	text string
	// same compares the Arrow value at i with that text.
	same scCmp
}

// scCmp says how an Arrow value differs from the database's text for it,
// or returns nil.
type scCmp func(a arrow.Array, i int, text string) error

// scTypeName is a field's type as scType.arrow spells it.
func scTypeName(f arrow.Field) string {
	s := f.Type.String()
	if ext, ok := f.Metadata.GetValue("ARROW:extension:name"); ok {
		s += "[" + ext + "]"
	}
	return s
}

// scTypeMatches is scTypeName(f) against a pattern of scType.arrow.
func scTypeMatches(f arrow.Field, want string) bool {
	got := scTypeName(f)
	if p, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(got, p)
	}
	return got == want
}

func scDiffer(a arrow.Array, i int, got, text string) error {
	if got == text {
		return nil
	}
	return fmt.Errorf("Arrow %s renders as %q, the database says %q", a.DataType(), got, text)
}

// scRender makes a comparator from a rendering of the Arrow value that
// must equal the database's text.
func scRender(render func(a arrow.Array, i int) string) scCmp {
	return func(a arrow.Array, i int, text string) error { return scDiffer(a, i, render(a, i), text) }
}

// scExact: the database's text is arrow-go's ValueStr (integers, booleans,
// strings).
var scExact = scRender(func(a arrow.Array, i int) string { return a.ValueStr(i) })

// scString: the bytes of a utf8 value are the text.
var scString = scRender(func(a arrow.Array, i int) string { return a.(*array.String).Value(i) })

// scFloat: the text parses to the same float (bit for bit; any NaN
// matches a NaN), in the width of the Arrow type.
func scFloat(a arrow.Array, i int, text string) error {
	var got float64
	bits := 64
	switch a := a.(type) {
	case *array.Float32:
		got, bits = float64(a.Value(i)), 32
	case *array.Float64:
		got = a.Value(i)
	default:
		return fmt.Errorf("not a float: %s", a.DataType())
	}
	want, err := strconv.ParseFloat(text, bits)
	if err != nil {
		return fmt.Errorf("the database's %q: %v", text, err)
	}
	if math.IsNaN(got) && math.IsNaN(want) || math.Float64bits(got) == math.Float64bits(want) {
		return nil
	}
	return fmt.Errorf("Arrow %v, the database says %q", got, text)
}

// scFloat15: SQLite renders a REAL with 15 significant digits ("%!.15g"),
// so the two agree to that many.
func scFloat15(a arrow.Array, i int, text string) error {
	want, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return fmt.Errorf("the database's %q: %v", text, err)
	}
	got := a.(*array.Float64).Value(i)
	if fmt.Sprintf("%.15g", got) != fmt.Sprintf("%.15g", want) {
		return fmt.Errorf("Arrow %v, the database says %q", got, text)
	}
	return nil
}

// scHex: the text is the bytes in hex (either case).
var scHex = scRender(func(a arrow.Array, i int) string { return hex.EncodeToString(scBytes(a, i)) })

func scHexFold(a arrow.Array, i int, text string) error { return scHex(a, i, strings.ToLower(text)) }

func scBytes(a arrow.Array, i int) []byte {
	switch a := a.(type) {
	case *array.Binary:
		return a.Value(i)
	case *array.LargeBinary:
		return a.Value(i)
	case *array.BinaryView:
		return a.Value(i)
	case *array.String:
		return []byte(a.Value(i))
	}
	panic("not binary: " + a.DataType().String())
}

// scDecimal renders a decimal128 from its 128-bit integer, so that a value
// with more digits than the type's precision still reads as the number it
// is.
func scDecimalStr(a arrow.Array, i int) string {
	d := a.(*array.Decimal128)
	n := d.Value(i).BigInt()
	scale := int(d.DataType().(*arrow.Decimal128Type).Scale)
	neg := n.Sign() < 0
	s := new(big.Int).Abs(n).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

var scDecimal = scRender(scDecimalStr)

// scTimeOfDay renders a time of day as both databases do: HH:MM:SS and
// the fraction without its trailing zeros.
func scTimeOfDay(a arrow.Array, i int) string {
	var ns int64
	switch a := a.(type) {
	case *array.Time64:
		ns = int64(a.Value(i)) * int64(a.DataType().(*arrow.Time64Type).Unit.Multiplier())
	case *array.Time32:
		ns = int64(a.Value(i)) * int64(a.DataType().(*arrow.Time32Type).Unit.Multiplier())
	default:
		panic("not a time: " + a.DataType().String())
	}
	return scClock(ns)
}

func scClock(ns int64) string {
	s := fmt.Sprintf("%02d:%02d:%02d", ns/3600e9, ns/60e9%60, ns/1e9%60)
	if f := ns % 1e9; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", f), "0")
	}
	return s
}

// scTime is the Arrow date or timestamp at i as a time.Time in UTC.
func scTime(a arrow.Array, i int) time.Time {
	switch a := a.(type) {
	case *array.Date32:
		return a.Value(i).ToTime()
	case *array.Date64:
		return a.Value(i).ToTime()
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit)
	}
	panic("not a date or timestamp: " + a.DataType().String())
}

// scDate: ISO dates; years before 1 (the driver's proleptic year 0 is
// 1 BC) in PostgreSQL's "YYYY-MM-DD BC".
var scDate = scRender(func(a arrow.Array, i int) string {
	t := scTime(a, i)
	if y := t.Year(); y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d BC", 1-y, t.Month(), t.Day())
	}
	return t.Format("2006-01-02")
})

// scTimestamp: "YYYY-MM-DD HH:MM:SS" and the fraction without trailing
// zeros (both databases, a timestamp without time zone).
var scTimestamp = scRender(scTimestampStr)

// scInstant: a timestamp with time zone is rendered in the session's time
// zone, which is the machine's: the text parses to the same instant.
func scInstant(a arrow.Array, i int, text string) error {
	got := scTime(a, i)
	// "2024-01-02 01:04:05.5+00", "...+05:30", "...-03:30:45"
	cut := strings.LastIndexAny(text, "+-")
	if cut < 10 {
		return fmt.Errorf("the database's %q has no UTC offset", text)
	}
	local, off := text[:cut], text[cut:]
	sign := 1
	if off[0] == '-' {
		sign = -1
	}
	var secs int
	for k, part := range strings.Split(off[1:], ":") {
		v, err := strconv.Atoi(part)
		if err != nil {
			return fmt.Errorf("the database's %q: %v", text, err)
		}
		secs += v * []int{3600, 60, 1}[k]
	}
	want, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", local, time.FixedZone("", sign*secs))
	if err != nil {
		return fmt.Errorf("the database's %q: %v", text, err)
	}
	if !got.Equal(want) {
		return fmt.Errorf("Arrow %s, the database says %q (%s)", got.Format(time.RFC3339Nano), text, want.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func scInterval(a arrow.Array, i int) (months, days int32, ns int64) {
	v := a.(*array.MonthDayNanoInterval).Value(i)
	return v.Months, v.Days, v.Nanoseconds
}

// scPgInterval renders PostgreSQL's default IntervalStyle ("postgres";
// EncodeInterval in its datetime.c): "1 year 2 mons 3 days 04:05:06.7",
// a + before a positive part that follows a negative one.
var scPgInterval = scRender(func(a arrow.Array, i int) string {
	months, days, ns := scInterval(a, i)
	var b strings.Builder
	zero, before := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !zero {
			b.WriteByte(' ')
		}
		if before && v > 0 {
			b.WriteByte('+')
		}
		fmt.Fprintf(&b, "%d %s", v, unit)
		if v != 1 {
			b.WriteByte('s')
		}
		before, zero = v < 0, false
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if zero || ns != 0 {
		if !zero {
			b.WriteByte(' ')
		}
		switch {
		case ns < 0:
			b.WriteByte('-')
			ns = -ns
		case before:
			b.WriteByte('+')
		}
		b.WriteString(scClock(ns))
	}
	return b.String()
})

// scDuckInterval renders DuckDB's interval text (IntervalToStringCast):
// "1 year 2 months 3 days 04:05:06.7", each part with its own sign,
// "00:00:00" for zero.
var scDuckInterval = scRender(scDuckIntervalStr)

func scDuckIntervalStr(a arrow.Array, i int) string {
	months, days, ns := scInterval(a, i)
	var parts []string
	part := func(v int32, unit string) {
		if v == 0 {
			return
		}
		s := fmt.Sprintf("%d %s", v, unit)
		if v != 1 && v != -1 {
			s += "s"
		}
		parts = append(parts, s)
	}
	part(months/12, "year")
	part(months%12, "month")
	part(days, "day")
	if ns != 0 {
		sign := ""
		if ns < 0 {
			sign, ns = "-", -ns
		}
		parts = append(parts, sign+scClock(ns))
	} else if len(parts) == 0 {
		return "00:00:00"
	}
	return strings.Join(parts, " ")
}

// scUUIDBytes: a 16-byte UUID (PostgreSQL's driver reads uuid as opaque
// binary) in its canonical text.
var scUUIDBytes = scRender(func(a arrow.Array, i int) string {
	h := hex.EncodeToString(scBytes(a, i))
	if len(h) != 32 {
		return "(" + h + ": not 16 bytes)"
	}
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
})

// scPgTimetz: PostgreSQL's timetz as the driver reads it, its binary form
// (opaque): microseconds since midnight (int64) and the zone in seconds
// west of UTC (int32), both big-endian; the text is "12:00:00+03".
var scPgTimetz = scRender(func(a arrow.Array, i int) string {
	b := scBytes(a, i)
	if len(b) != 12 {
		return fmt.Sprintf("(%x: not 12 bytes)", b)
	}
	us := int64(binary.BigEndian.Uint64(b))
	east := -int32(binary.BigEndian.Uint32(b[8:]))
	sign := "+"
	if east < 0 {
		sign, east = "-", -east
	}
	s := scClock(us*1000) + fmt.Sprintf("%s%02d", sign, east/3600)
	if m := east % 3600; m != 0 {
		s += fmt.Sprintf(":%02d", m/60)
		if sec := m % 60; sec != 0 {
			s += fmt.Sprintf(":%02d", sec)
		}
	}
	return s
})

// scCents: money arrives as its int64 count of cents; the text is the
// database's money cast to numeric.
var scCents = scRender(func(a arrow.Array, i int) string {
	v := a.(*array.Int64).Value(i)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
})

// scUint32: oid is unsigned; the driver reads it as int32 with the same
// bits (4000000000 arrives as -294967296).
var scUint32 = scRender(func(a arrow.Array, i int) string {
	return strconv.FormatUint(uint64(uint32(a.(*array.Int32).Value(i))), 10)
})

// scNumericText: numeric arrives as the driver's text of it, which is
// PostgreSQL's except for NaN ("nan").
func scNumericText(a arrow.Array, i int, text string) error {
	got := a.(*array.String).Value(i)
	if text == "NaN" && got == "nan" {
		return nil
	}
	return scDiffer(a, i, got, text)
}

// scPgArray renders a one-dimensional array as PostgreSQL's text: "{1,2,NULL}",
// elements quoted where they need it.
var scPgArray = scRender(func(a arrow.Array, i int) string {
	l := a.(*array.List)
	start, end := l.ValueOffsets(i)
	vals := l.ListValues()
	var parts []string
	for k := int(start); k < int(end); k++ {
		if vals.IsNull(k) {
			parts = append(parts, "NULL")
			continue
		}
		s := vals.ValueStr(k)
		if sv, ok := vals.(*array.String); ok {
			s = sv.Value(k)
		}
		if s == "" || strings.EqualFold(s, "NULL") || strings.ContainsAny(s, " ,{}\"\\\t\n") {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, ",") + "}"
})

// scDuck renders a value as DuckDB casts it to VARCHAR, nested types
// included: lists "[1, 2, NULL]", structs "{'x': 1, 'y': z}", maps
// "{k=1}", strings inside them bare (” when empty).
var scDuck = scRender(func(a arrow.Array, i int) string { return scDuckStr(a, i, false) })

func scDuckStr(a arrow.Array, i int, nested bool) string {
	if scIsNull(a, i) {
		return "NULL"
	}
	switch v := a.(type) {
	case *array.String:
		s := v.Value(i)
		if nested && s == "" {
			return "''"
		}
		return s
	case *array.Float32, *array.Float64:
		return scDuckFloat(v, i)
	case *array.Decimal128:
		return scDecimalStr(v, i)
	case *array.Binary:
		return scDuckBlob(v.Value(i))
	case *array.Date32:
		return scTime(v, i).Format("2006-01-02")
	case *array.Time64:
		return scTimeOfDay(v, i)
	case *array.Timestamp:
		return scTimestampStr(v, i)
	case *array.MonthDayNanoInterval:
		return scDuckIntervalStr(v, i)
	case *array.Map:
		start, end := v.ValueOffsets(i)
		var parts []string
		for k := int(start); k < int(end); k++ {
			parts = append(parts, scDuckStr(v.Keys(), k, true)+"="+scDuckStr(v.Items(), k, true))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *array.List:
		return scDuckList(v.ListValues(), v.ValueOffsets, i)
	case *array.FixedSizeList:
		return scDuckList(v.ListValues(), v.ValueOffsets, i)
	case *array.Struct:
		st := v.DataType().(*arrow.StructType)
		var parts []string
		for k := range st.NumFields() {
			parts = append(parts, "'"+st.Field(k).Name+"': "+scDuckStr(v.Field(k), i, true))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *array.SparseUnion:
		return scDuckStr(v.Field(v.ChildID(i)), i, nested)
	case *array.Dictionary:
		return scDuckStr(v.Dictionary(), v.GetValueIndex(i), nested)
	}
	return a.ValueStr(i)
}

func scDuckList(vals arrow.Array, offsets func(int) (int64, int64), i int) string {
	start, end := offsets(i)
	var parts []string
	for k := int(start); k < int(end); k++ {
		parts = append(parts, scDuckStr(vals, k, true))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func scTimestampStr(a arrow.Array, i int) string {
	t := scTime(a, i)
	return t.Format("2006-01-02 ") + scClock(int64(t.Hour())*3600e9+int64(t.Minute())*60e9+int64(t.Second())*1e9+int64(t.Nanosecond()))
}

// scDuckFloat: DuckDB's float text: shortest round trip, "nan", "inf",
// "-inf", and a ".0" on integral values ("-0.0", "1.0"); exponents as "1e+30".
func scDuckFloat(a arrow.Array, i int) string {
	var f float64
	bits := 64
	switch a := a.(type) {
	case *array.Float32:
		f, bits = float64(a.Value(i)), 32
	case *array.Float64:
		f = a.Value(i)
	}
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// scDuckBlob: DuckDB's blob text: printable ASCII as is, other bytes (and
// the quotes and backslash) as \xHH.
func scDuckBlob(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 32 && c <= 126 && c != '\\' && c != '\'' && c != '"' {
			s.WriteByte(c)
		} else {
			fmt.Fprintf(&s, `\x%02X`, c)
		}
	}
	return s.String()
}

// scIsNull: a union has no validity of its own; its value is the chosen
// child's.
func scIsNull(a arrow.Array, i int) bool {
	if u, ok := a.(*array.SparseUnion); ok {
		return u.Field(u.ChildID(i)).IsNull(i)
	}
	return a.IsNull(i)
}

// scDuckBit: DuckDB's BIT arrives as its storage (plain binary): a byte
// counting the padding bits, then the bits, padded at the front with ones.
var scDuckBit = scRender(func(a arrow.Array, i int) string {
	b := scBytes(a, i)
	if len(b) < 2 {
		return fmt.Sprintf("(%x: too short)", b)
	}
	var s strings.Builder
	for k, c := range b[1:] {
		for bit := 7; bit >= 0; bit-- {
			if k == 0 && 7-bit < int(b[0]) {
				continue
			}
			s.WriteByte('0' + c>>bit&1)
		}
	}
	return s.String()
})

// scDuckBignum: DuckDB's BIGNUM (VARINT) arrives as its storage, an
// arrow.opaque binary: a 3-byte header (bit 23 set: not negative; the
// rest the byte count) and the magnitude big-endian, every byte of a
// negative number inverted.
var scDuckBignum = scRender(func(a arrow.Array, i int) string {
	b := bytes.Clone(scBytes(a, i))
	if len(b) < 4 {
		return fmt.Sprintf("(%x: too short)", b)
	}
	neg := b[0]&0x80 == 0
	if neg {
		for k := range b {
			b[k] = ^b[k]
		}
	}
	n := new(big.Int).SetBytes(b[3:])
	if neg {
		n.Neg(n)
	}
	return n.String()
})

// scDuckTimeTZ: DuckDB reads TIMETZ as a plain time64 and drops the
// offset: 12:00:00+03 arrives as 12:00:00. The text's time part must
// match.
func scDuckTimeTZ(a arrow.Array, i int, text string) error {
	cut := strings.LastIndexAny(text, "+-")
	if cut < 0 {
		return fmt.Errorf("the database's %q has no offset", text)
	}
	return scDiffer(a, i, scTimeOfDay(a, i), text[:cut])
}

func (ty scType) with(setup ...string) scType {
	ty.setup = setup
	return ty
}

// Send-function renderings: PostgreSQL's driver reads the types it has no
// Arrow type for as arrow.opaque binary holding their binary send format,
// which the database renders too (typsend, in hex).
func scPgSend(sql, send string, values ...string) scType {
	return scType{sql: sql, values: values, arrow: "binary[arrow.opaque]",
		text: "encode(" + send + "(v), 'hex')", same: scHex}
}

// scPostgresTypes: PostgreSQL 15's built-in types (and a user-defined
// enum), as Arrow's PostgreSQL driver (release 24) reads them.
var scPostgresTypes = []scType{
	{sql: "smallint", values: []string{"0", "-32768", "32767"}, arrow: "int16", same: scExact},
	{sql: "integer", values: []string{"0", "-2147483648", "2147483647"}, arrow: "int32", same: scExact},
	{sql: "bigint", values: []string{"0", "-9223372036854775808", "9223372036854775807"}, arrow: "int64", same: scExact},
	{sql: "real", values: []string{"1.5", "-0.1", "3.4028235e38", "1e-45", "'NaN'", "'Infinity'", "'-Infinity'", "'-0'"},
		arrow: "float32", same: scFloat},
	{sql: "double precision", values: []string{"0.1", "-1e308", "5e-324", "'NaN'", "'Infinity'", "'-0'"},
		arrow: "float64", same: scFloat},
	// numeric arrives as the driver's text of it (utf8 marked
	// arrow.opaque), PostgreSQL's own but for NaN ("nan").
	{sql: "numeric", values: []string{"0", "-0.000001230", "123456789012345678901234567890.123456789", "1e-20", "'NaN'"},
		arrow: "utf8[arrow.opaque]", same: scNumericText},
	{sql: "numeric(10,2)", values: []string{"12.5", "-0.01", "99999999.99"}, arrow: "utf8[arrow.opaque]", same: scNumericText},
	{sql: "boolean", values: []string{"true", "false"}, arrow: "bool", same: scExact},
	{sql: "text", values: []string{"''", "'héllo ✓'", `'a''b\c'`, "E'line\\nbreak\\ttab'"}, arrow: "utf8", same: scString},
	{sql: "varchar(5)", values: []string{"'abc'", "''"}, arrow: "utf8", same: scString},
	// char(n) keeps its padding in Arrow; CAST AS TEXT would strip it,
	// format's %s (the type's output function) keeps it.
	{sql: "char(3)", values: []string{"'z'", "'abc'"}, arrow: "utf8", text: "format('%s', v)", same: scString},
	{sql: "name", values: []string{"'pg_class'"}, arrow: "utf8", same: scString},
	// bytea's text is "\x" and hex (bytea_output = hex, the default).
	{sql: "bytea", values: []string{`'\x'`, `'\xdeadbeef00'`}, arrow: "binary",
		text: "substr(CAST(v AS TEXT), 3)", same: scHex},
	{sql: "date", values: []string{"'2024-02-29'", "'1970-01-01'", "'1969-12-31'", "'0001-01-01'", "'0044-03-15 BC'", "'9999-12-31'"},
		arrow: "date32", same: scDate},
	{sql: "time", values: []string{"'00:00:00'", "'12:34:56.789'", "'23:59:59.999999'"}, arrow: "time64[us]", same: scRender(scTimeOfDay)},
	{sql: "timestamp", values: []string{"'2024-01-02 03:04:05.678901'", "'1969-12-31 23:59:59.5'", "'1900-01-01 00:00:00'", "'2262-04-11 23:47:16'"},
		arrow: "timestamp[us]", same: scTimestamp},
	// timestamptz arrives in UTC; the text is in the session's zone.
	{sql: "timestamptz", values: []string{"'2024-01-02 03:04:05+02'", "'1969-07-20 20:17:40.5Z'", "'2000-01-01 00:00:00-05:30'"},
		arrow: "timestamp[us, tz=UTC]", same: scInstant},
	{sql: "interval", values: []string{"'1 year 2 mons 3 days 04:05:06.7'", "'-1 year +2 days -03:00'", "'0'", "'-00:00:00.000001'", "'25 hours'", "'1 mon -1 day'"},
		arrow: "month_day_nano_interval", same: scPgInterval},
	// timetz has no Arrow type: opaque binary (its send format).
	{sql: "timetz", values: []string{"'12:00:00+03'", "'23:59:59.5-05:30'", "'00:00:00+00'"}, arrow: "binary[arrow.opaque]", same: scPgTimetz},
	// uuid: opaque binary, the 16 bytes.
	{sql: "uuid", values: []string{"'00112233-4455-6677-8899-aabbccddeeff'", "gen_random_uuid()"}, arrow: "binary[arrow.opaque]", same: scUUIDBytes},
	{sql: "json", values: []string{`'{"a": [1, 2.5, null], "b": "x"}'`, `'[]'`}, arrow: "utf8[arrow.json]", same: scString},
	// jsonb's text is its normalized form, which the driver reads too.
	{sql: "jsonb", values: []string{`'{"b":"x","a":[1,2.5,null]}'`}, arrow: "utf8[arrow.json]", same: scString},
	// money: int64 cents (the text: money as numeric, which does not
	// depend on lc_monetary).
	{sql: "money", values: []string{"12.34", "-3", "1234567.89"}, arrow: "int64", text: "CAST(CAST(v AS numeric) AS TEXT)", same: scCents},
	// oid is unsigned: int32 with the same bits.
	{sql: "oid", values: []string{"0", "42", "4000000000"}, arrow: "int32", same: scUint32},
	{sql: "integer[]", values: []string{"'{1,2,NULL}'", "'{}'"}, arrow: "list<item: int32, nullable>", same: scPgArray},
	{sql: "text[]", values: []string{`'{"a b","",NULL,"x,y","q\"r",plain}'`}, arrow: "list<item: utf8, nullable>", same: scPgArray},
	// A user-defined enum: opaque binary, its label's bytes.
	scPgSend("sc_mood", "enum_send", "'ok'", "'happy'").with("DROP TYPE IF EXISTS sc_mood", "CREATE TYPE sc_mood AS ENUM ('sad', 'ok', 'happy')"),
	scPgSend("inet", "inet_send", "'10.0.0.1/8'", "'::1'"),
	scPgSend("cidr", "cidr_send", "'10.0.0.0/8'"),
	scPgSend("macaddr", "macaddr_send", "'08:00:2b:01:02:03'"),
	scPgSend("macaddr8", "macaddr8_send", "'08:00:2b:01:02:03:04:05'"),
	scPgSend("point", "point_send", "'(1,2.5)'"),
	scPgSend("line", "line_send", "'{1,-1,0}'"),
	scPgSend("lseg", "lseg_send", "'[(0,0),(1,1)]'"),
	scPgSend("box", "box_send", "'(1,1),(0,0)'"),
	scPgSend("path", "path_send", "'[(0,0),(1,1),(2,0)]'"),
	scPgSend("polygon", "poly_send", "'((0,0),(1,1),(2,0))'"),
	scPgSend("circle", "circle_send", "'<(0,0),1>'"),
	scPgSend("bit(3)", "bit_send", "B'101'"),
	scPgSend("varbit", "varbit_send", "B'1'", "B'0000000011'"),
	scPgSend("int4range", "range_send", "'[1,5)'", "'empty'"),
	scPgSend("tstzrange", "range_send", "'[2024-01-01 00:00+00,)'"),
	scPgSend("xml", "xml_send", "'<a>b</a>'"),
	scPgSend("tsvector", "tsvectorsend", "'a fat cat'"),
	scPgSend("tsquery", "tsquerysend", "'fat & cat'"),
	scPgSend("pg_lsn", "pg_lsn_send", "'16/B374D848'"),
}

// scSQLiteTypes: SQLite's storage classes (and its dynamic typing), as
// Arrow's SQLite driver reads them: it infers a column's Arrow type from
// the values it reads, not from the declared type.
var scSQLiteTypes = []scType{
	{sql: "INTEGER", values: []string{"0", "-9223372036854775808", "9223372036854775807"}, arrow: "int64", same: scExact},
	// SQLite renders a REAL with 15 significant digits.
	{sql: "REAL", values: []string{"0.1", "-1e308", "5e-324", "1.5", "-0.0"}, arrow: "float64", same: scFloat15},
	{sql: "TEXT", values: []string{"''", "'héllo ✓'", "'a''b'", "char(10)"}, arrow: "utf8", same: scString},
	// A BLOB's text would be its bytes: hex() renders them.
	{sql: "BLOB", values: []string{"x''", "x'00ff41'"}, arrow: "binary", text: "hex(v)", same: scHexFold},
	// NUMERIC affinity stores 1 as an integer and 2.5 as a real: a column
	// mixing them reads as float64.
	{sql: "NUMERIC", values: []string{"1", "2.5"}, arrow: "float64", same: scFloat15},
	// A column without a type holding an integer, text and a blob reads
	// as binary: each value's bytes (the integer's as its text).
	{sql: "", values: []string{"1", "'x'", "x'00'"}, arrow: "binary", text: "hex(CAST(v AS BLOB))", same: scHexFold},
}

// scDuckDBTypes: DuckDB 1.5's types as its ADBC driver reads them (default
// Arrow export settings).
var scDuckDBTypes = []scType{
	{sql: "BOOLEAN", values: []string{"true", "false"}, arrow: "bool", same: scExact},
	{sql: "TINYINT", values: []string{"-128", "127"}, arrow: "int8", same: scExact},
	{sql: "SMALLINT", values: []string{"-32768", "32767"}, arrow: "int16", same: scExact},
	{sql: "INTEGER", values: []string{"-2147483648", "2147483647"}, arrow: "int32", same: scExact},
	{sql: "BIGINT", values: []string{"-9223372036854775808", "9223372036854775807"}, arrow: "int64", same: scExact},
	// HUGEINT arrives as decimal(38, 0); its extremes have 39 digits,
	// more than the type's precision, but the 128-bit value is exact.
	{sql: "HUGEINT", values: []string{"0", "-170141183460469231731687303715884105727", "170141183460469231731687303715884105727"},
		arrow: "decimal(38, 0)", same: scDecimal},
	{sql: "UTINYINT", values: []string{"0", "255"}, arrow: "uint8", same: scExact},
	{sql: "USMALLINT", values: []string{"65535"}, arrow: "uint16", same: scExact},
	{sql: "UINTEGER", values: []string{"4294967295"}, arrow: "uint32", same: scExact},
	{sql: "UBIGINT", values: []string{"18446744073709551615"}, arrow: "uint64", same: scExact},
	// UHUGEINT arrives as decimal(38, 0) too, so values of 2^127 and
	// more wrap to negative numbers there (DuckDB's export): only smaller
	// ones here.
	{sql: "UHUGEINT", values: []string{"0", "170141183460469231731687303715884105727"}, arrow: "decimal(38, 0)", same: scDecimal},
	{sql: "FLOAT", values: []string{"1.5", "-0.1", "3.4028235e38", "'nan'", "'inf'", "'-inf'", "-0.0"}, arrow: "float32", same: scDuck},
	{sql: "DOUBLE", values: []string{"0.1", "-1e308", "5e-324", "1e30", "'nan'", "-0.0", "2"}, arrow: "float64", same: scDuck},
	{sql: "DECIMAL(4,1)", values: []string{"-999.9", "0.5"}, arrow: "decimal(4, 1)", same: scDecimal},
	{sql: "DECIMAL(9,3)", values: []string{"123456.789", "-0.001"}, arrow: "decimal(9, 3)", same: scDecimal},
	{sql: "DECIMAL(18,6)", values: []string{"123456789012.345678"}, arrow: "decimal(18, 6)", same: scDecimal},
	{sql: "DECIMAL(38,10)", values: []string{"1234567890123456789012345678.9012345678", "-0.0000000001"}, arrow: "decimal(38, 10)", same: scDecimal},
	{sql: "VARCHAR", values: []string{"''", "'héllo ✓'", "'a''b'"}, arrow: "utf8", same: scString},
	{sql: "BLOB", values: []string{"''", `'\x00\xFFab'`, `'q''"'`}, arrow: "binary", same: scDuck},
	{sql: "DATE", values: []string{"'2024-02-29'", "'1970-01-01'", "'1969-12-31'", "'0001-01-01'", "'9999-12-31'"}, arrow: "date32", same: scDuck},
	{sql: "TIME", values: []string{"'00:00:00'", "'12:34:56.789'", "'23:59:59.999999'"}, arrow: "time64[us]", same: scDuck},
	// TIMETZ arrives as a plain time64: the offset is dropped.
	{sql: "TIMETZ", values: []string{"'12:00:00+03'", "'23:59:59.5-05:30'"}, arrow: "time64[us]", same: scDuckTimeTZ},
	{sql: "TIMESTAMP", values: []string{"'2024-01-02 03:04:05.678901'", "'1969-12-31 23:59:59.5'"}, arrow: "timestamp[us]", same: scDuck},
	{sql: "TIMESTAMP_S", values: []string{"'2024-01-02 03:04:05'"}, arrow: "timestamp[s]", same: scDuck},
	{sql: "TIMESTAMP_MS", values: []string{"'2024-01-02 03:04:05.123'"}, arrow: "timestamp[ms]", same: scDuck},
	{sql: "TIMESTAMP_NS", values: []string{"'2024-01-02 03:04:05.123456789'", "'1677-09-22 00:00:00'"}, arrow: "timestamp[ns]", same: scDuck},
	// TIMESTAMPTZ arrives with the session's time zone (the machine's).
	{sql: "TIMESTAMPTZ", values: []string{"'2024-01-02 03:04:05+02'", "'1969-07-20 20:17:40.5+00'"}, arrow: "timestamp[us, tz=*", same: scInstant},
	{sql: "INTERVAL", values: []string{"'1 year 2 months 3 days 04:05:06.7'", "'-1 year'", "'0 seconds'", "'-00:00:00.000001'", "'25 hours'", "'1 month -1 day'"},
		arrow: "month_day_nano_interval", same: scDuckInterval},
	// UUID arrives as its text (utf8).
	{sql: "UUID", values: []string{"'00112233-4455-6677-8899-aabbccddeeff'", "gen_random_uuid()"}, arrow: "utf8", same: scString},
	// JSON arrives as plain utf8 (no arrow.json).
	{sql: "JSON", values: []string{`'{"a": [1, 2.5, null]}'`}, arrow: "utf8", same: scString},
	// An ENUM is a dictionary of its labels.
	{sql: "sc_mood", setup: []string{"DROP TYPE IF EXISTS sc_mood", "CREATE TYPE sc_mood AS ENUM ('sad', 'ok', 'happy')"},
		values: []string{"'ok'", "'happy'"}, arrow: "dictionary<values=utf8, indices=uint8, ordered=false>", same: scDuck},
	{sql: "INTEGER[]", values: []string{"[1, 2, NULL]", "[]"}, arrow: "list<l: int32, nullable>", same: scDuck},
	{sql: "VARCHAR[]", values: []string{"['a', '', NULL]"}, arrow: "list<l: utf8, nullable>", same: scDuck},
	{sql: "INTEGER[3]", values: []string{"[1, 2, 3]", "[NULL, 5, 6]"}, arrow: "fixed_size_list<: int32, nullable>[3]", same: scDuck},
	{sql: "STRUCT(x INTEGER, y VARCHAR)", values: []string{"{'x': 1, 'y': 'z'}", "{'x': NULL, 'y': NULL}"},
		arrow: "struct<x: int32 nullable, y: utf8 nullable>", same: scDuck},
	{sql: "MAP(VARCHAR, INTEGER)", values: []string{"MAP {'k': 1, 'l': NULL}", "MAP {}"},
		arrow: "map<utf8, int32, items_nullable>", same: scDuck},
	{sql: "UNION(num INTEGER, s VARCHAR)", values: []string{"union_value(num := 2)", "union_value(s := 'x')"},
		arrow: "sparse_union<num: type=int32, nullable=0, s: type=utf8, nullable=1>", same: scDuck},
	// BIT arrives as its storage, plain binary.
	{sql: "BIT", values: []string{"'101'", "'1'", "'00000000011'"}, arrow: "binary", same: scDuckBit},
	// BIGNUM arrives as its storage, arrow.opaque binary.
	{sql: "BIGNUM", values: []string{"'123456789012345678901234567890'", "'-5'", "'0'", "'-340282366920938463463374607431768211456'"},
		arrow: "binary[arrow.opaque]", same: scDuckBignum},
}
