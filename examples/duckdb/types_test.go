package main

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// typeRows is how many rows the type tests generate (one in seven null).
const typeRows = 120_000

// A typeCase is one column: the SQL expression that makes it from i (a
// BIGINT, 0 ≤ i < typeRows; the test makes every seventh row NULL, unless
// the expression starts with "!" and makes its own nulls), the SQL
// aggregates over it (the column is c), and the same aggregates computed
// in Go over an imported array (one batch at a time; the test adds them).
type typeCase struct {
	name string
	expr string
	aggs []string
	goAg func(t *testing.T, a arrow.Array) []*big.Int
}

func bigs(vs ...int64) []*big.Int {
	out := make([]*big.Int, len(vs))
	for i, v := range vs {
		out[i] = big.NewInt(v)
	}
	return out
}

func count(a arrow.Array) int64 { return int64(a.Len() - a.NullN()) }

// intAt is element i of an integer or decimal array as a big.Int (the
// unscaled value of a decimal).
func intAt(t *testing.T, a arrow.Array, i int) *big.Int {
	if e, ok := a.(array.ExtensionArray); ok {
		a = e.Storage()
	}
	switch a := a.(type) {
	case *array.FixedSizeBinary: // DuckDB's lossless HUGEINT/UHUGEINT: 16 bytes, little-endian
		b := a.Value(i)
		if len(b) != 16 {
			t.Fatalf("intAt: %s", a.DataType())
		}
		be := make([]byte, 16)
		for k := range be {
			be[k] = b[15-k]
		}
		v := new(big.Int).SetBytes(be)
		if be[0]&0x80 != 0 {
			v.Sub(v, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		return v
	case *array.Int8:
		return big.NewInt(int64(a.Value(i)))
	case *array.Int16:
		return big.NewInt(int64(a.Value(i)))
	case *array.Int32:
		return big.NewInt(int64(a.Value(i)))
	case *array.Int64:
		return big.NewInt(a.Value(i))
	case *array.Uint8:
		return big.NewInt(int64(a.Value(i)))
	case *array.Uint16:
		return big.NewInt(int64(a.Value(i)))
	case *array.Uint32:
		return big.NewInt(int64(a.Value(i)))
	case *array.Uint64:
		return new(big.Int).SetUint64(a.Value(i))
	case *array.Decimal32:
		return big.NewInt(int64(a.Value(i)))
	case *array.Decimal64:
		return big.NewInt(int64(a.Value(i)))
	case *array.Decimal128:
		return a.Value(i).BigInt()
	case *array.Date32:
		return big.NewInt(int64(a.Value(i)))
	case *array.Time64:
		return big.NewInt(int64(a.Value(i)))
	case *array.Timestamp:
		return big.NewInt(int64(a.Value(i)))
	}
	t.Fatalf("intAt: unexpected array type %s", a.DataType())
	return nil
}

// sumInts is count and sum of an integer-valued array.
func sumInts(t *testing.T, a arrow.Array) []*big.Int {
	s := new(big.Int)
	for i := range a.Len() {
		if a.IsValid(i) {
			s.Add(s, intAt(t, a, i))
		}
	}
	return []*big.Int{big.NewInt(count(a)), s}
}

// floatTimes4 is count and sum(c*4) of a float array.
func floatTimes4(t *testing.T, a arrow.Array) []*big.Int {
	var s float64
	for i := range a.Len() {
		if !a.IsValid(i) {
			continue
		}
		switch a := a.(type) {
		case *array.Float32:
			s += float64(a.Value(i)) * 4
		case *array.Float64:
			s += a.Value(i) * 4
		default:
			t.Fatalf("floatTimes4: %s", a.DataType())
		}
	}
	return bigs(count(a), int64(s))
}

// strAt is element i of a string-like or binary-like array as bytes.
func strAt(t *testing.T, a arrow.Array, i int) []byte {
	switch a := a.(type) {
	case array.StringLike:
		return []byte(a.Value(i))
	case interface{ Value(int) []byte }:
		return a.Value(i)
	}
	t.Fatalf("strAt: %s", a.DataType())
	return nil
}

// strAggs is count, sum(octet_length) and sum of the second byte.
func strAggs(t *testing.T, a arrow.Array) []*big.Int {
	var n, b int64
	for i := range a.Len() {
		if a.IsValid(i) {
			s := strAt(t, a, i)
			n += int64(len(s))
			b += int64(s[1])
		}
	}
	return bigs(count(a), n, b)
}

var typeCases = []typeCase{
	{"tinyint", "(i % 100 - 50)::TINYINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"smallint", "(i % 30000 - 15000)::SMALLINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"integer", "(i * 7 - 300000)::INTEGER", []string{"count(c)", "sum(c)"}, sumInts},
	{"bigint", "(i * 1000003 - 50000000000)::BIGINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"hugeint", "(i * 100000000000000000000 - 7)::HUGEINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"utinyint", "(i % 256)::UTINYINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"usmallint", "(i % 65536)::USMALLINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"uinteger", "(i * 30000)::UINTEGER", []string{"count(c)", "sum(c)"}, sumInts},
	{"ubigint", "(i * 1000000000000 + 9000000000000000000)::UBIGINT", []string{"count(c)", "sum(c)"}, sumInts},
	{"float", "(i * 0.25)::FLOAT", []string{"count(c)", "sum(c::DOUBLE * 4)::BIGINT"}, floatTimes4},
	{"double", "(i * 0.5 - 100)::DOUBLE", []string{"count(c)", "sum(c * 4)::BIGINT"}, floatTimes4},
	{"decimal_4_1", "(i % 1000 * 0.3)::DECIMAL(4,1)", []string{"count(c)", "(sum(c) * 10)::HUGEINT"}, sumInts},
	{"decimal_9_2", "(i * 1.23 - 1000)::DECIMAL(9,2)", []string{"count(c)", "(sum(c) * 100)::HUGEINT"}, sumInts},
	{"decimal_18_4", "(i * 3.1415)::DECIMAL(18,4)", []string{"count(c)", "(sum(c) * 10000)::HUGEINT"}, sumInts},
	{"decimal_38_10", "(i * 1.5 - 77)::DECIMAL(38,10)", []string{"count(c)", "(sum(c) * 10000000000)::HUGEINT"}, sumInts},
	{"varchar", "'v' || (i * 7919 % 1000)::VARCHAR || repeat('x', (i % 20)::INTEGER)",
		[]string{"count(c)", "sum(octet_length(c::BLOB))", "sum(unicode(substr(c, 2, 1)))"}, strAggs},
	{"blob", "('b' || (i % 500)::VARCHAR || repeat('y', (i % 17)::INTEGER))::BLOB",
		[]string{"count(c)", "sum(octet_length(c))", "sum(unicode(substr(c::VARCHAR, 2, 1)))"}, strAggs},
	{"bool", "i % 3 = 0", []string{"count(c)", "count_if(c)"}, func(t *testing.T, a arrow.Array) []*big.Int {
		if e, ok := a.(array.ExtensionArray); ok { // lossless: arrow.bool8, int8 storage
			a = e.Storage()
		}
		var n int64
		for i := range a.Len() {
			if !a.IsValid(i) {
				continue
			}
			switch b := a.(type) {
			case *array.Boolean:
				if b.Value(i) {
					n++
				}
			case *array.Int8:
				if b.Value(i) != 0 {
					n++
				}
			default:
				t.Fatalf("bool: %s", a.DataType())
			}
		}
		return bigs(count(a), n)
	}},
	{"date", "DATE '1950-01-01' + (i % 40000)::INTEGER", []string{"count(c)", "sum(c - DATE '1970-01-01')"}, sumInts},
	{"time", "TIME '00:00:00' + to_microseconds(i * 1000003 % 86400000000)",
		[]string{"count(c)", "sum(epoch_us(DATE '1970-01-01' + c))"}, sumInts},
	{"timestamp", "TIMESTAMP '1960-01-01' + to_microseconds(i * 123456789)", []string{"count(c)", "sum(epoch_us(c))"}, sumInts},
	{"timestamp_s", "(TIMESTAMP '1960-01-01' + to_seconds(i * 12345))::TIMESTAMP_S", []string{"count(c)", "sum(epoch(c)::BIGINT)"}, sumInts},
	{"timestamp_ms", "(TIMESTAMP '1960-01-01' + to_milliseconds(i * 1234567))::TIMESTAMP_MS", []string{"count(c)", "sum(epoch_ms(c))"}, sumInts},
	{"timestamp_ns", "(TIMESTAMP '1990-01-01' + to_microseconds(i * 1234567))::TIMESTAMP_NS", []string{"count(c)", "sum(epoch_ns(c))"}, sumInts},
	{"timestamptz", "(TIMESTAMP '1960-01-01' + to_microseconds(i * 98765431))::TIMESTAMPTZ", []string{"count(c)", "sum(epoch_us(c))"}, sumInts},
	{"interval", "to_months((i % 11)::INTEGER) + to_days((i % 29)::INTEGER) + to_microseconds(i * 1000)",
		[]string{"count(c)", "sum(datepart('month', c))", "sum(datepart('day', c))", "sum(datepart('microseconds', c) + 60000000 * datepart('minute', c))"},
		func(t *testing.T, a arrow.Array) []*big.Int {
			var m, d, us int64
			switch a := a.(type) {
			case *array.MonthDayNanoInterval:
				for i := range a.Len() {
					if a.IsValid(i) {
						v := a.Value(i)
						m, d, us = m+int64(v.Months), d+int64(v.Days), us+v.Nanoseconds/1000
					}
				}
			default:
				t.Fatalf("interval: %s", a.DataType())
			}
			return bigs(count(a), m, d, us)
		}},
	{"list", "list_transform(range(i % 5), x -> CASE WHEN x = 2 THEN NULL ELSE x + i END)",
		[]string{"count(c)", "sum(len(c))", "sum(list_sum(c))", "sum(list_count(c))"}, listAggs},
	{"array", "!(CASE WHEN i % 7 = 0 THEN NULL ELSE [i, i + 1, i * 2] END)::BIGINT[3]",
		[]string{"count(c)", "3 * count(c)", "sum(c[1] + c[2] + c[3])", "3 * count(c)"}, listAggs},
	{"struct", "{'a': i % 1000, 'b': CASE WHEN i % 11 = 0 THEN NULL ELSE 's' || (i % 10) END}",
		[]string{"count(c)", "sum(c.a)", "count(c.b)", "sum(length(c.b))"},
		func(t *testing.T, a arrow.Array) []*big.Int {
			s := a.(*array.Struct)
			fa, fb := s.Field(0), s.Field(1)
			sa := new(big.Int)
			var nb, lb int64
			for i := range s.Len() {
				if !s.IsValid(i) {
					continue
				}
				if fa.IsValid(i) {
					sa.Add(sa, intAt(t, fa, i))
				}
				if fb.IsValid(i) {
					nb++
					lb += int64(len(strAt(t, fb, i)))
				}
			}
			return []*big.Int{big.NewInt(count(a)), sa, big.NewInt(nb), big.NewInt(lb)}
		}},
	{"map", "map(['k' || (i % 3), 'z'], [i, i % 5])",
		[]string{"count(c)", "sum(cardinality(c))", "sum(list_sum(map_values(c)))", "sum(list_sum(map_values(c)))"}, listAggs},
	{"enum", "(['sad', 'ok', 'happy'])[i % 3 + 1]::mood",
		[]string{"count(c)", "sum(length(c::VARCHAR))"},
		func(t *testing.T, a arrow.Array) []*big.Int {
			var n int64
			if d, ok := a.(*array.Dictionary); ok {
				for i := range d.Len() {
					if d.IsValid(i) {
						n += int64(len(strAt(t, d.Dictionary(), d.GetValueIndex(i))))
					}
				}
			} else {
				for i := range a.Len() {
					if a.IsValid(i) {
						n += int64(len(strAt(t, a, i)))
					}
				}
			}
			return bigs(count(a), n)
		}},
	{"uuid", "md5(i::VARCHAR)::UUID",
		[]string{"count(c)", "sum(('0x' || substr(c::VARCHAR, 1, 2))::INTEGER)"},
		func(t *testing.T, a arrow.Array) []*big.Int {
			if e, ok := a.(array.ExtensionArray); ok {
				a = e.Storage()
			}
			var n int64
			for i := range a.Len() {
				if !a.IsValid(i) {
					continue
				}
				b := strAt(t, a, i)
				if len(b) == 16 {
					n += int64(b[0])
				} else {
					v, err := strconv.ParseUint(string(b[:2]), 16, 8)
					if err != nil {
						t.Fatalf("uuid %q: %v", b, err)
					}
					n += int64(v)
				}
			}
			return bigs(count(a), n)
		}},
	{"union", "CASE WHEN i % 2 = 0 THEN (i::INTEGER)::UNION(n INTEGER, s VARCHAR) ELSE ('x' || i)::UNION(n INTEGER, s VARCHAR) END",
		[]string{"count(c)", "count_if(union_tag(c) = 'n')", "sum(union_extract(c, 'n'))", "sum(length(union_extract(c, 's')))"},
		func(t *testing.T, a arrow.Array) []*big.Int {
			u, ok := a.(*array.SparseUnion)
			if !ok {
				t.Fatalf("union: %s", a.DataType())
			}
			var n, tagN, ln int64
			sn := new(big.Int)
			for i := range u.Len() {
				child := u.Field(u.ChildID(i))
				if !child.IsValid(i) {
					continue // DuckDB's NULL union: null in the child
				}
				n++
				if u.ChildID(i) == 0 {
					tagN++
					sn.Add(sn, intAt(t, child, i))
				} else {
					ln += int64(len(strAt(t, child, i)))
				}
			}
			return []*big.Int{big.NewInt(n), big.NewInt(tagN), sn, big.NewInt(ln)}
		}},
}

// listAggs is count, sum of lengths, sum and count of the non-null values
// of a list-like array (list, large list, list view, fixed-size list, map:
// a map's values are its entries' second field).
func listAggs(t *testing.T, a arrow.Array) []*big.Int {
	l, ok := a.(array.ListLike)
	if !ok {
		t.Fatalf("listAggs: %s", a.DataType())
	}
	vals := l.ListValues()
	if st, ok := vals.(*array.Struct); ok { // map entries
		vals = st.Field(1)
	}
	var n, nv int64
	s := new(big.Int)
	for i := range l.Len() {
		if !l.IsValid(i) {
			continue
		}
		lo, hi := l.ValueOffsets(i)
		n += hi - lo
		for j := lo; j < hi; j++ {
			if vals.IsValid(int(j)) {
				nv++
				s.Add(s, intAt(t, vals, int(j)))
			}
		}
	}
	if _, isMap := a.(*array.Map); isMap {
		return []*big.Int{big.NewInt(count(a)), big.NewInt(n), s, new(big.Int).Set(s)}
	}
	return []*big.Int{big.NewInt(count(a)), big.NewInt(n), s, big.NewInt(nv)}
}

// typeSQL is the CREATE TABLE statement for the cases.
func typeSQL(table string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s AS SELECT i", table)
	for _, c := range typeCases {
		if e, ok := strings.CutPrefix(c.expr, "!"); ok { // makes its own nulls
			fmt.Fprintf(&b, ",\n %s AS c_%s", e, c.name)
			continue
		}
		fmt.Fprintf(&b, ",\n CASE WHEN i %% 7 = 0 THEN NULL ELSE %s END AS c_%s", c.expr, c.name)
	}
	fmt.Fprintf(&b, "\nFROM range(%d) r(i)", typeRows)
	return b.String()
}

// aggSQL is one SELECT of every case's aggregates over table, each cast
// to VARCHAR (column k of case j is named a_j_k).
func aggSQL(table string, cases []typeCase) string {
	var cols []string
	for j, c := range cases {
		for k, ag := range c.aggs {
			cols = append(cols, fmt.Sprintf("(%s)::VARCHAR AS a_%d_%d", colRef(ag, "c_"+c.name), j, k))
		}
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + table
}

// colRef replaces the column placeholder c (a whole word) in an aggregate
// with col.
func colRef(ag, col string) string {
	var b strings.Builder
	isWord := func(r byte) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	for i := 0; i < len(ag); i++ {
		if ag[i] == 'c' && (i == 0 || !isWord(ag[i-1])) && (i+1 == len(ag) || !isWord(ag[i+1])) && !(i > 0 && ag[i-1] == '\'') {
			b.WriteString(col)
			continue
		}
		b.WriteByte(ag[i])
	}
	return b.String()
}

// decodeDictionaries replaces every dictionary column of rec by its
// decoded values: DuckDB 1.5's Arrow scan corrupts its heap on
// dictionary-encoded input (see README), so input goes to it decoded.
func decodeDictionaries(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, rec.NumCols())
	fields := make([]arrow.Field, rec.NumCols())
	for i, c := range rec.Columns() {
		f := rec.Schema().Field(i)
		d, ok := c.(*array.Dictionary)
		if !ok {
			c.Retain()
			cols[i], fields[i] = c, f
			continue
		}
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for j := range d.Len() {
			if d.IsNull(j) {
				b.AppendNull()
			} else {
				b.Append(string(strAt(t, d.Dictionary(), d.GetValueIndex(j))))
			}
		}
		cols[i] = b.NewArray()
		b.Release()
		f.Type = arrow.BinaryTypes.String
		fields[i] = f
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}
