package sqldriver_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

// fake is an ADBC driver in Go that records what it is asked and answers
// what the test sets: results, a parameter schema, failures.
type fake struct {
	mu          sync.Mutex
	opts        map[string]string // of the last NewDatabase
	payload     arrow.RecordBatch // what queries return
	paramSchema *arrow.Schema     // nil: GetParameterSchema is not implemented
	bound       []arrow.RecordBatch
	log         []string
	closes      []string // the Close calls of databases and connections
	noOptions   bool     // connections take no options after they are made
	commitErr   error    // Commit fails with it
	optionErr   map[string]error
	getInfoErr  error
	executeErr  error // executions fail with it
	block       bool  // executions wait for their context to end
}

var errNotImplemented = adbc.Error{Code: adbc.StatusNotImplemented, Msg: "fake: not implemented"}

func (f *fake) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

func (f *fake) closed(what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes = append(f.closes, what)
}

func (f *fake) closedSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.closes...)
}

func (f *fake) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fake) NewDatabase(opts map[string]string) (adbc.Database, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts = opts
	return &fakeDB{f}, nil
}

type fakeDB struct{ f *fake }

func (d *fakeDB) SetOptions(map[string]string) error { return nil }
func (d *fakeDB) Close() error                       { d.f.closed("database"); return nil }
func (d *fakeDB) Open(context.Context) (adbc.Connection, error) {
	if d.f.noOptions {
		return &fakeConn{d.f}, nil
	}
	return &fakeConnOptions{fakeConn{d.f}}, nil
}

type fakeConn struct{ f *fake }

func (c *fakeConn) GetInfo(context.Context, []adbc.InfoCode) (array.RecordReader, error) {
	if c.f.getInfoErr != nil {
		return nil, c.f.getInfoErr
	}
	return array.NewRecordReader(adbc.GetInfoSchema, nil)
}
func (c *fakeConn) GetObjects(context.Context, adbc.ObjectDepth, *string, *string, *string, *string, []string) (array.RecordReader, error) {
	return nil, errNotImplemented
}
func (c *fakeConn) GetTableSchema(context.Context, *string, *string, string) (*arrow.Schema, error) {
	return nil, errNotImplemented
}
func (c *fakeConn) GetTableTypes(context.Context) (array.RecordReader, error) {
	return nil, errNotImplemented
}
func (c *fakeConn) Commit(context.Context) error {
	c.f.record("Commit")
	return c.f.commitErr
}
func (c *fakeConn) Rollback(ctx context.Context) error {
	c.f.record("Rollback ctx.Err=%v", ctx.Err())
	return nil
}
func (c *fakeConn) NewStatement() (adbc.Statement, error) { return &fakeStmt{f: c.f}, nil }
func (c *fakeConn) Close() error                          { c.f.closed("connection"); return nil }
func (c *fakeConn) ReadPartition(context.Context, []byte) (array.RecordReader, error) {
	return nil, errNotImplemented
}

type fakeConnOptions struct{ fakeConn }

func (c *fakeConnOptions) SetOption(key, value string) error {
	c.f.record("%s=%s", key, value)
	return c.f.optionErr[key]
}

type fakeStmt struct {
	f     *fake
	bound arrow.RecordBatch
}

func (s *fakeStmt) Close() error {
	if s.bound != nil {
		s.bound.Release()
	}
	return nil
}
func (s *fakeStmt) SetOption(string, string) error { return nil }
func (s *fakeStmt) SetSqlQuery(q string) error {
	s.f.record("SetSqlQuery %s", q)
	return nil
}
func (s *fakeStmt) wait(ctx context.Context) error {
	if !s.f.block {
		return nil
	}
	<-ctx.Done()
	return adbc.Error{Code: adbc.StatusCancelled, Msg: "fake: " + ctx.Err().Error()}
}
func (s *fakeStmt) ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error) {
	if err := s.wait(ctx); err != nil {
		return nil, -1, err
	}
	if s.f.executeErr != nil {
		return nil, -1, s.f.executeErr
	}
	if s.f.payload == nil {
		return nil, -1, errors.New("no payload")
	}
	rr, err := array.NewRecordReader(s.f.payload.Schema(), []arrow.RecordBatch{s.f.payload})
	return rr, -1, err
}
func (s *fakeStmt) ExecuteUpdate(ctx context.Context) (int64, error) {
	if err := s.wait(ctx); err != nil {
		return -1, err
	}
	if s.f.executeErr != nil {
		return -1, s.f.executeErr
	}
	return 7, nil
}
func (s *fakeStmt) Prepare(context.Context) error { return nil }
func (s *fakeStmt) SetSubstraitPlan([]byte) error { return errNotImplemented }
func (s *fakeStmt) BindStream(context.Context, array.RecordReader) error {
	return errNotImplemented
}
func (s *fakeStmt) Bind(_ context.Context, rec arrow.RecordBatch) error {
	rec.Retain()
	if s.bound != nil {
		s.bound.Release()
	}
	s.bound = rec
	rec.Retain()
	s.f.mu.Lock()
	s.f.bound = append(s.f.bound, rec)
	s.f.mu.Unlock()
	return nil
}
func (s *fakeStmt) GetParameterSchema() (*arrow.Schema, error) {
	if s.f.paramSchema == nil {
		return nil, errNotImplemented
	}
	return s.f.paramSchema, nil
}
func (s *fakeStmt) ExecutePartitions(context.Context) (*arrow.Schema, adbc.Partitions, int64, error) {
	return nil, adbc.Partitions{}, -1, errNotImplemented
}

// lastBound returns the last record bound, and releases those bound.
func (f *fake) lastBound(t *testing.T) arrow.RecordBatch {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bound) == 0 {
		t.Fatal("nothing bound")
	}
	last := f.bound[len(f.bound)-1]
	for _, r := range f.bound[:len(f.bound)-1] {
		r.Release()
	}
	f.bound = nil
	t.Cleanup(last.Release)
	return last
}

// openFake opens a sql.DB over f.
func openFake(t *testing.T, f *fake) *sql.DB {
	t.Helper()
	cn, err := sqldriver.Driver{Driver: f}.OpenConnector("k=v")
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	t.Cleanup(func() { db.Close() })
	return db
}

func ptr[T any](v T) *T { return &v }

// Arrow's types come out of the rows as the Go values the package
// documentation lists (arrow-adbc's type tests, and the types it leaves
// out), with the column metadata to match.
func TestArrowTypesScan(t *testing.T) {
	date := time.Date(2026, time.June, 19, 0, 0, 0, 0, time.UTC)
	timestamp := time.Date(2026, time.June, 19, 1, 2, 3, 4_005_006, time.UTC)
	timeOfDay := time.Date(1970, time.January, 1, 1, 2, 3, 4_005_006, time.UTC)
	str := arrow.Field{Name: "str", Type: arrow.BinaryTypes.String, Nullable: true}
	i32 := arrow.Field{Name: "int", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	tests := []struct {
		ty       arrow.DataType
		json     string
		want     []any
		scanType reflect.Type
	}{
		{arrow.PrimitiveTypes.Int8, `[1, null]`, []any{int8(1), nil}, reflect.TypeFor[int8]()},
		{arrow.PrimitiveTypes.Int16, `[1, null]`, []any{int16(1), nil}, reflect.TypeFor[int16]()},
		{arrow.PrimitiveTypes.Int32, `[1, null]`, []any{int32(1), nil}, reflect.TypeFor[int32]()},
		{arrow.PrimitiveTypes.Int64, `[1, null]`, []any{int64(1), nil}, reflect.TypeFor[int64]()},
		{arrow.PrimitiveTypes.Uint8, `[1, null]`, []any{uint8(1), nil}, reflect.TypeFor[uint8]()},
		{arrow.PrimitiveTypes.Uint16, `[1, null]`, []any{uint16(1), nil}, reflect.TypeFor[uint16]()},
		{arrow.PrimitiveTypes.Uint32, `[1, null]`, []any{uint32(1), nil}, reflect.TypeFor[uint32]()},
		{arrow.PrimitiveTypes.Uint64, `[18446744073709551615, null]`, []any{uint64(18446744073709551615), nil}, reflect.TypeFor[uint64]()},
		{arrow.PrimitiveTypes.Float32, `[1.5, null]`, []any{float32(1.5), nil}, reflect.TypeFor[float32]()},
		{arrow.PrimitiveTypes.Float64, `[1.5, null]`, []any{1.5, nil}, reflect.TypeFor[float64]()},
		{arrow.FixedWidthTypes.Float16, `[1.5, null]`, []any{float16.New(1.5), nil}, reflect.TypeFor[float16.Num]()},
		{arrow.FixedWidthTypes.Boolean, `[true, null]`, []any{true, nil}, reflect.TypeFor[bool]()},
		{arrow.FixedWidthTypes.Date32, `["2026-06-19", null]`, []any{date, nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Date64, `["2026-06-19", null]`, []any{date, nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Time32s, `["01:02:03", null]`, []any{timeOfDay.Truncate(time.Second), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Time32ms, `["01:02:03.004", null]`, []any{timeOfDay.Truncate(time.Millisecond), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Time64us, `["01:02:03.004005", null]`, []any{timeOfDay.Truncate(time.Microsecond), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Time64ns, `["01:02:03.004005006", null]`, []any{timeOfDay, nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Timestamp_s, `["2026-06-19T01:02:03Z", null]`, []any{timestamp.Truncate(time.Second), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Timestamp_ms, `["2026-06-19T01:02:03.004Z", null]`, []any{timestamp.Truncate(time.Millisecond), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Timestamp_us, `["2026-06-19T01:02:03.004005Z", null]`, []any{timestamp.Truncate(time.Microsecond), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Timestamp_ns, `["2026-06-19T01:02:03.004005006Z", null]`, []any{timestamp, nil}, reflect.TypeFor[time.Time]()},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `["2026-06-19T01:02:03.004005Z", null]`, []any{timestamp.Truncate(time.Microsecond), nil}, reflect.TypeFor[time.Time]()},
		{arrow.FixedWidthTypes.Duration_s, `["5s", null]`, []any{5 * time.Second, nil}, reflect.TypeFor[time.Duration]()},
		{arrow.FixedWidthTypes.Duration_ms, `["5ms", null]`, []any{5 * time.Millisecond, nil}, reflect.TypeFor[time.Duration]()},
		{arrow.FixedWidthTypes.Duration_us, `["5us", null]`, []any{5 * time.Microsecond, nil}, reflect.TypeFor[time.Duration]()},
		{arrow.FixedWidthTypes.Duration_ns, `["5ns", null]`, []any{5 * time.Nanosecond, nil}, reflect.TypeFor[time.Duration]()},
		{arrow.FixedWidthTypes.MonthInterval, `[{"months": 3}, null]`, []any{arrow.MonthInterval(3), nil}, reflect.TypeFor[arrow.MonthInterval]()},
		{arrow.FixedWidthTypes.DayTimeInterval, `[{"days": 1, "milliseconds": 2}, null]`, []any{arrow.DayTimeInterval{Days: 1, Milliseconds: 2}, nil}, reflect.TypeFor[arrow.DayTimeInterval]()},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, `[{"months": 1, "days": 2, "nanoseconds": 3}, null]`, []any{arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3}, nil}, reflect.TypeFor[arrow.MonthDayNanoInterval]()},
		{&arrow.Decimal128Type{Precision: 9, Scale: 2}, `["12.34", null]`, []any{decimal128.FromI64(1234), nil}, reflect.TypeFor[decimal128.Num]()},
		{&arrow.Decimal256Type{Precision: 40, Scale: 5}, `["1.00000", null]`, []any{decimal256.FromI64(100000), nil}, reflect.TypeFor[decimal256.Num]()},
		{arrow.BinaryTypes.Binary, `["AQID", null]`, []any{[]byte{1, 2, 3}, nil}, reflect.TypeFor[[]byte]()},
		{arrow.BinaryTypes.LargeBinary, `["AQID", null]`, []any{[]byte{1, 2, 3}, nil}, reflect.TypeFor[[]byte]()},
		{arrow.BinaryTypes.BinaryView, `["AQID", null]`, []any{[]byte{1, 2, 3}, nil}, reflect.TypeFor[[]byte]()},
		{&arrow.FixedSizeBinaryType{ByteWidth: 3}, `["AQID", null]`, []any{[]byte{1, 2, 3}, nil}, reflect.TypeFor[[]byte]()},
		{arrow.BinaryTypes.String, `["value", null]`, []any{"value", nil}, reflect.TypeFor[string]()},
		{arrow.BinaryTypes.LargeString, `["value", null]`, []any{"value", nil}, reflect.TypeFor[string]()},
		{arrow.BinaryTypes.StringView, `["a value longer than twelve bytes", null]`, []any{"a value longer than twelve bytes", nil}, reflect.TypeFor[string]()},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, `["b", null, "a", "b"]`, []any{"b", nil, "a", "b"}, reflect.TypeFor[string]()},
		{arrow.Null, `[null, null]`, []any{nil, nil}, reflect.TypeFor[any]()},
		// arreflect's fallback (which drops a list's nulls).
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1, null, 2], null]`, []any{[]int32{1, 0, 2}, nil}, reflect.TypeFor[[]int32]()},
		{arrow.StructOf(i32, str), `[{"int": 1, "str": "value"}, null]`, []any{struct {
			Int *int32  `arrow:"int"`
			Str *string `arrow:"str"`
		}{ptr(int32(1)), ptr("value")}, nil}, nil},
		// A union's value is its child's, at the child's offset.
		{arrow.SparseUnionOf([]arrow.Field{str, i32}, []arrow.UnionTypeCode{0, 1}), `[[0, "s"], [1, 100], [1, null]]`, []any{"s", int32(100), nil}, reflect.TypeFor[any]()},
		{arrow.DenseUnionOf([]arrow.Field{i32, str}, []arrow.UnionTypeCode{10, 20}), `[[20, "x"], [10, 1], [20, "y"], [10, null], [10, 3]]`, []any{"x", int32(1), "y", nil, int32(3)}, reflect.TypeFor[any]()},
	}
	f := &fake{}
	db := openFake(t, f)
	for _, tc := range tests {
		t.Run(tc.ty.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: tc.ty, Nullable: true}}, nil)
			col, _, err := array.FromJSON(mem, tc.ty, strings.NewReader(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			batch := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
			col.Release()
			defer batch.Release()
			f.payload = batch

			rows, err := db.Query("query")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			if got := cts[0].DatabaseTypeName(); got != tc.ty.String() {
				t.Errorf("DatabaseTypeName %q, want %q", got, tc.ty)
			}
			if tc.scanType != nil && cts[0].ScanType() != tc.scanType {
				t.Errorf("ScanType %v, want %v", cts[0].ScanType(), tc.scanType)
			}
			if cts[0].ScanType() == nil {
				t.Error("ScanType nil")
			}
			var got []any
			for rows.Next() {
				var v any
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				got = append(got, v)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			for _, v := range got {
				if v != nil && tc.scanType != nil && tc.scanType != reflect.TypeFor[any]() && reflect.TypeOf(v) != tc.scanType {
					t.Errorf("value %#v is not of the scan type %v", v, tc.scanType)
				}
			}
		})
	}
}

// Arrow values scan into the Go types database/sql converts them to:
// timestamps into time.Time and sql.NullTime, small integers into int64,
// and so on.
func TestArrowTypesScanConversions(t *testing.T) {
	f := &fake{}
	db := openFake(t, f)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: false},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	batch, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(
		`[{"ts": "2026-06-19T01:02:03.004005Z", "d": "2026-06-19", "i8": -3, "u32": 4000000000, "f32": 0.5, "dec": "1.25", "s": "x", "b": true},
		  {"ts": null, "d": null, "i8": null, "u32": null, "f32": 1, "dec": null, "s": null, "b": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Release()
	f.payload = batch
	rows, err := db.Query("q")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, _ := rows.ColumnTypes()
	if p, s, ok := cts[5].DecimalSize(); !ok || p != 9 || s != 2 {
		t.Errorf("DecimalSize %d %d %v", p, s, ok)
	}
	if n, ok := cts[4].Nullable(); n || !ok {
		t.Errorf("f32 Nullable %v %v", n, ok)
	}
	var (
		ts  time.Time
		d   sql.NullTime
		i8  int64
		u32 uint64
		f32 float64
		dec any
		s   string
		b   sql.NullBool
	)
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(&ts, &d, &i8, &u32, &f32, &dec, &s, &b); err != nil {
		t.Fatal(err)
	}
	if !ts.Equal(time.Date(2026, 6, 19, 1, 2, 3, 4005000, time.UTC)) || !d.Valid || d.Time.Day() != 19 ||
		i8 != -3 || u32 != 4000000000 || f32 != 0.5 || dec != decimal128.FromI64(125) || s != "x" || !b.Bool {
		t.Errorf("row 1: %v %v %v %v %v %v %v %v", ts, d, i8, u32, f32, dec, s, b)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	var tsp *time.Time
	var sn sql.NullString
	if err := rows.Scan(&tsp, &d, new(sql.NullInt64), new(sql.NullInt64), &f32, &dec, &sn, &b); err != nil {
		t.Fatal(err)
	}
	if tsp != nil || d.Valid || dec != nil || sn.Valid || b.Valid {
		t.Errorf("row 2: %v %v %v %v %v", tsp, d, dec, sn, b)
	}
}

// Where the driver reports the parameters' types, arguments bind with
// those types, converted from the Go types database/sql passes where that
// loses nothing.
func TestTypedParameters(t *testing.T) {
	ms := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	f := &fake{paramSchema: arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString},
		{Name: "lb", Type: arrow.BinaryTypes.LargeBinary},
		{Name: "ts", Type: ms},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "t", Type: arrow.FixedWidthTypes.Time64us},
		{Name: "dec", Type: dec},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "any", Type: arrow.Null},
	}, nil)}
	db := openFake(t, f)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_007_008, time.UTC)
	res, err := db.Exec("INSERT", 5, uint(200), 1.5, "large", "bytes", at, at, at, decimal128.FromI64(12345), nil, int16(3))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 7 {
		t.Errorf("RowsAffected %d, want the driver's 7", n)
	}
	rec := f.lastBound(t)
	if rec.NumRows() != 1 || rec.NumCols() != 11 {
		t.Fatalf("bound %d x %d", rec.NumRows(), rec.NumCols())
	}
	want := []struct {
		ty  arrow.DataType
		val string
	}{
		{arrow.PrimitiveTypes.Int32, "5"},
		{arrow.PrimitiveTypes.Uint8, "200"},
		{arrow.PrimitiveTypes.Float32, "1.5"},
		{arrow.BinaryTypes.LargeString, "large"},
		{arrow.BinaryTypes.LargeBinary, "Ynl0ZXM="},
		{ms, "2026-01-02T03:04:05.006Z"},
		{arrow.FixedWidthTypes.Date32, "2026-01-02"},
		{arrow.FixedWidthTypes.Time64us, "03:04:05.006007"},
		{dec, "123.45"},
		{arrow.PrimitiveTypes.Int64, "(null)"},
		{arrow.PrimitiveTypes.Int16, "3"}, // unknown type: as the Go type is
	}
	for i, w := range want {
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), w.ty) || col.ValueStr(0) != w.val {
			t.Errorf("parameter %d: %s %s, want %s %s", i, col.DataType(), col.ValueStr(0), w.ty, w.val)
		}
		if name := rec.Schema().Field(i).Name; name != fmt.Sprint(i) {
			t.Errorf("parameter %d named %q", i, name)
		}
	}

	// Values that do not fit their parameter fail with InvalidArgument.
	for i, args := range [][]any{
		{300, 1, 1, "", "", at, at, at, decimal128.Num{}, 1, 1},        // 300 for int32 is fine...
		{1, 300, 1, "", "", at, at, at, decimal128.Num{}, 1, 1},        // ...but not for uint8
		{1, -1, 1, "", "", at, at, at, decimal128.Num{}, 1, 1},         // nor -1
		{1, 1, "x", "", "", at, at, at, decimal128.Num{}, 1, 1},        // a string for a float
		{1, 1, 1, []byte("x"), "", at, at, at, decimal128.Num{}, 1, 1}, // bytes for a string
		{1, 1, 1, "", "", "2026", at, at, decimal128.Num{}, 1, 1},      // a string for a timestamp
		{1, 1, 1, "", "", at, at, at, 1.5, 1, 1},                       // a float for a decimal
	} {
		_, err := db.Exec("INSERT", args...)
		if i == 0 {
			if err != nil {
				t.Errorf("case 0: %v", err)
			}
			continue
		}
		var ae adbc.Error
		if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !strings.Contains(ae.Msg, "expected parameter of type") {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if _, err := db.Exec("INSERT", 1); err == nil || !strings.Contains(err.Error(), "expected 11 arguments, got 1") {
		t.Errorf("one argument of eleven: %v", err)
	}

	// Arrow's value types, for parameters of their types.
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	d256 := &arrow.Decimal256Type{Precision: 40, Scale: 1}
	f.paramSchema = arrow.NewSchema([]arrow.Field{
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64},
		{Name: "ts", Type: ns},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms},
		{Name: "t64", Type: arrow.FixedWidthTypes.Time64ns},
		{Name: "dec", Type: d256},
		{Name: "sv", Type: arrow.BinaryTypes.StringView},
		{Name: "bv", Type: arrow.BinaryTypes.BinaryView},
		{Name: "d64t", Type: arrow.FixedWidthTypes.Date64},
		{Name: "t32t", Type: arrow.FixedWidthTypes.Time32s},
	}, nil)
	tsv, _ := arrow.TimestampFromTime(at, arrow.Nanosecond)
	if _, err := db.Exec("INSERT3", arrow.Date32FromTime(at), arrow.Date64FromTime(at), tsv, arrow.Time32(3_600_001), arrow.Time64(1),
		decimal256.FromI64(-15), "view", []byte("bv"), at, at); err != nil {
		t.Fatal(err)
	}
	rec = f.lastBound(t)
	want = []struct {
		ty  arrow.DataType
		val string
	}{
		{arrow.FixedWidthTypes.Date32, "2026-01-02"},
		{arrow.FixedWidthTypes.Date64, "2026-01-02"},
		{ns, "2026-01-02T03:04:05.006007008"},
		{arrow.FixedWidthTypes.Time32ms, "01:00:00.001"},
		{arrow.FixedWidthTypes.Time64ns, "00:00:00.000000001"},
		{d256, "-1.5"},
		{arrow.BinaryTypes.StringView, "view"},
		{arrow.BinaryTypes.BinaryView, "YnY="},
		{arrow.FixedWidthTypes.Date64, "2026-01-02"},
		{arrow.FixedWidthTypes.Time32s, "03:04:05"},
	}
	for i, w := range want {
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), w.ty) || col.ValueStr(0) != w.val {
			t.Errorf("parameter %d: %s %s, want %s %s", i, col.DataType(), col.ValueStr(0), w.ty, w.val)
		}
	}

	// Named arguments take their parameter's column and type.
	f.paramSchema = arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int16},
		{Name: ":b", Type: arrow.BinaryTypes.String},
	}, nil)
	if _, err := db.Exec("INSERT2", sql.Named("b", "bee"), sql.Named("a", 2)); err != nil {
		t.Fatal(err)
	}
	rec = f.lastBound(t)
	if rec.Column(0).DataType().ID() != arrow.INT16 || rec.Column(0).ValueStr(0) != "2" || rec.Column(1).ValueStr(0) != "bee" ||
		rec.Schema().Field(0).Name != "a" || rec.Schema().Field(1).Name != "b" {
		t.Errorf("named arguments bound as %v", rec)
	}
	if _, err := db.Exec("INSERT2", sql.Named("c", 1), sql.Named("a", 2)); !errors.Is(err, adbcerr.InvalidArgument) {
		t.Errorf("an unknown name: %v", err)
	}
	if _, err := db.Exec("INSERT2", 1, sql.Named("a", 2)); !errors.Is(err, adbcerr.InvalidArgument) {
		t.Errorf("two arguments for one parameter: %v", err)
	}

	// Without a parameter schema (DB.Query, or a driver that cannot
	// tell), database/sql's conversion gives the types, and a time.Time
	// is a timestamp in microseconds.
	f.paramSchema = nil
	batch, _, _ := array.RecordFromJSON(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil), strings.NewReader(`[{"x": 1}]`))
	defer batch.Release()
	f.payload = batch
	for _, run := range []func(args ...any) error{
		func(args ...any) error { _, err := db.Exec("X", args...); return err },
		func(args ...any) error {
			rows, err := db.Query("X", args...)
			if err == nil {
				rows.Close()
			}
			return err
		},
	} {
		if err := run(int8(1), uint16(2), float32(0.5), at, nil, sql.NullString{String: "s", Valid: true}, []byte{9}); err != nil {
			t.Fatal(err)
		}
		rec = f.lastBound(t)
		var types []string
		for i := range int(rec.NumCols()) {
			types = append(types, rec.Schema().Field(i).Name+":"+rec.Column(i).DataType().String()+"="+rec.Column(i).ValueStr(0))
		}
		got := strings.Join(types, " ")
		if want := "1:int64=1 2:int64=2 3:float64=0.5 4:timestamp[us, tz=UTC]=2026-01-02T03:04:05.006007Z 5:null=(null) 6:utf8=s 7:binary=CQ=="; got != want {
			t.Errorf("bound\n%s\nwant\n%s", got, want)
		}
	}
}

// Transactions set the connection's options in order, undo them at the
// end and after failures, and fail cleanly where the driver cannot.
func TestTransactionOptions(t *testing.T) {
	ctx := context.Background()
	const (
		acOff      = adbc.OptionKeyAutoCommit + "=" + adbc.OptionValueDisabled
		acOn       = adbc.OptionKeyAutoCommit + "=" + adbc.OptionValueEnabled
		roOn       = adbc.OptionKeyReadOnly + "=" + adbc.OptionValueEnabled
		roOff      = adbc.OptionKeyReadOnly + "=" + adbc.OptionValueDisabled
		rolledBack = "Rollback ctx.Err=<nil>"
	)
	iso := func(l adbc.OptionIsolationLevel) string { return adbc.OptionKeyIsolationLevel + "=" + string(l) }
	check := func(t *testing.T, f *fake, want ...string) {
		t.Helper()
		var got []string
		for _, c := range f.calls() {
			if !strings.HasPrefix(c, "SetSqlQuery") {
				got = append(got, c)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		f.mu.Lock()
		f.log = nil
		f.mu.Unlock()
	}

	t.Run("commit", func(t *testing.T) {
		f := &fake{}
		db := openFake(t, f)
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		check(t, f, acOff, iso(adbc.LevelSerializable), roOn, "Commit", acOn, roOff, iso(adbc.LevelDefault))
	})
	t.Run("rollback", func(t *testing.T) {
		f := &fake{}
		db := openFake(t, f)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		check(t, f, acOff, iso(adbc.LevelDefault), rolledBack, acOn)
	})
	t.Run("every level", func(t *testing.T) {
		f := &fake{}
		db := openFake(t, f)
		for l, want := range map[sql.IsolationLevel]adbc.OptionIsolationLevel{
			sql.LevelReadUncommitted: adbc.LevelReadUncommitted, sql.LevelReadCommitted: adbc.LevelReadCommitted,
			sql.LevelRepeatableRead: adbc.LevelRepeatableRead, sql.LevelSnapshot: adbc.LevelSnapshot,
			sql.LevelLinearizable: adbc.LevelLinearizable,
		} {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: l})
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			check(t, f, acOff, iso(want), "Commit", acOn, iso(adbc.LevelDefault)) // the level ends with it
		}
		if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelWriteCommitted}); !errors.Is(err, adbcerr.NotImplemented) {
			t.Errorf("LevelWriteCommitted: %v", err)
		}
		check(t, f) // nothing touched
	})
	t.Run("options not implemented", func(t *testing.T) {
		f := &fake{optionErr: map[string]error{adbc.OptionKeyIsolationLevel: errNotImplemented, adbc.OptionKeyReadOnly: errNotImplemented}}
		db := openFake(t, f)
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		check(t, f, acOff, iso(adbc.LevelDefault), roOn, "Commit", acOn)
	})
	t.Run("isolation refused", func(t *testing.T) {
		refused := adbc.Error{Code: adbc.StatusInvalidArgument, Msg: "no"}
		f := &fake{optionErr: map[string]error{adbc.OptionKeyIsolationLevel: refused}}
		db := openFake(t, f)
		if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSnapshot}); !errors.Is(err, adbcerr.InvalidArgument) {
			t.Errorf("BeginTx: %v", err)
		}
		check(t, f, acOff, iso(adbc.LevelSnapshot), rolledBack, acOn)
	})
	t.Run("commit fails", func(t *testing.T) {
		f := &fake{commitErr: adbc.Error{Code: adbc.StatusIntegrity, Msg: "deferred constraint"}}
		db := openFake(t, f)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); !errors.Is(err, adbcerr.Integrity) {
			t.Errorf("Commit: %v", err)
		}
		check(t, f, acOff, iso(adbc.LevelDefault), "Commit", rolledBack, acOn)
	})
	t.Run("autocommit cannot be restored", func(t *testing.T) {
		f := &fake{}
		db := openFake(t, f)
		db.SetMaxOpenConns(1)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		f.optionErr = map[string]error{adbc.OptionKeyAutoCommit: adbc.Error{Code: adbc.StatusIO, Msg: "gone"}}
		if err := tx.Commit(); !errors.Is(err, adbcerr.IO) {
			t.Errorf("Commit: %v", err)
		}
		// The connection left the pool: the next transaction is on a new
		// one.
		f.optionErr = nil
		if st := db.Stats(); st.OpenConnections != 0 {
			t.Errorf("%d connections open after a bad one", st.OpenConnections)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		f := &fake{}
		db := openFake(t, f)
		cctx, cancel := context.WithCancel(ctx)
		if _, err := db.BeginTx(cctx, nil); err != nil {
			t.Fatal(err)
		}
		cancel()
		deadline := time.Now().Add(5 * time.Second)
		for len(f.calls()) < 4 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		check(t, f, acOff, iso(adbc.LevelDefault), rolledBack, acOn)
	})
	t.Run("no options", func(t *testing.T) {
		f := &fake{noOptions: true}
		db := openFake(t, f)
		if _, err := db.Begin(); !errors.Is(err, adbcerr.NotImplemented) {
			t.Errorf("Begin: %v", err)
		}
	})
}

// The context of a call reaches the driver, which can stop on it.
func TestContextReachesDriver(t *testing.T) {
	f := &fake{block: true}
	db := openFake(t, f)
	for name, run := range map[string]func(ctx context.Context) error{
		"query": func(ctx context.Context) error {
			_, err := db.QueryContext(ctx, "q")
			return err
		},
		"query with arguments": func(ctx context.Context) error {
			_, err := db.QueryContext(ctx, "q", 1, "x")
			return err
		},
		"exec": func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "q", 1)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := run(ctx)
			if !errors.Is(err, adbcerr.Cancelled) || !strings.Contains(err.Error(), "deadline exceeded") {
				t.Errorf("%v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("returned after %v", d)
			}
		})
	}
}

// Ping: GetInfo, passed where the driver lacks it.
func TestPing(t *testing.T) {
	f := &fake{}
	db := openFake(t, f)
	if err := db.Ping(); err != nil {
		t.Error(err)
	}
	f.getInfoErr = errNotImplemented
	if err := db.Ping(); err != nil {
		t.Errorf("Ping without GetInfo: %v", err)
	}
	f.getInfoErr = adbc.Error{Code: adbc.StatusIO, Msg: "unreachable"}
	if err := db.Ping(); !errors.Is(err, adbcerr.IO) {
		t.Errorf("Ping: %v", err)
	}
	if st := db.Stats(); st.OpenConnections != 0 {
		t.Errorf("the connection that failed Ping stayed in the pool: %+v", st)
	}
}

// A connection whose call fails with StatusIO (the server gone) leaves the
// pool, and the next query runs on a new one; other errors keep it.
func TestLostConnectionLeavesThePool(t *testing.T) {
	f := &fake{}
	db := openFake(t, f)
	exec := func() error { _, err := db.Exec("UPDATE t SET x = 1"); return err }
	if err := exec(); err != nil {
		t.Fatal(err)
	}
	f.executeErr = adbc.Error{Code: adbc.StatusInvalidArgument, Msg: "fake: no such table"}
	if err := exec(); !errors.Is(err, adbcerr.InvalidArgument) {
		t.Fatalf("Exec: %v", err)
	}
	if st := db.Stats(); st.OpenConnections != 1 {
		t.Errorf("an SQL error closed the connection: %+v", st)
	}
	f.executeErr = adbc.Error{Code: adbc.StatusIO, Msg: "fake: server closed the connection unexpectedly"}
	if err := exec(); !errors.Is(err, adbcerr.IO) {
		t.Fatalf("Exec: %v", err)
	}
	if st := db.Stats(); st.OpenConnections != 0 || !slices.Contains(f.closedSoFar(), "connection") {
		t.Errorf("the lost connection stayed in the pool: %+v, closed %v", st, f.closedSoFar())
	}
	f.executeErr = nil
	if err := exec(); err != nil {
		t.Errorf("the query after: %v", err)
	}
}

// A connection idle in the pool is pinged before it is reused; one that
// fails the ping is closed and the query runs on a new one.
func TestIdleConnectionPinged(t *testing.T) {
	defer sqldriver.SetIdleCheck(0)()
	f := &fake{}
	db := openFake(t, f)
	exec := func() error { _, err := db.Exec("UPDATE t SET x = 1"); return err }
	if err := exec(); err != nil {
		t.Fatal(err)
	}
	f.getInfoErr = adbc.Error{Code: adbc.StatusIO, Msg: "fake: no connection to the server"}
	if err := exec(); err != nil {
		t.Fatalf("the query after the idle connection failed its ping: %v", err)
	}
	if got := f.closedSoFar(); !slices.Equal(got, []string{"connection"}) {
		t.Errorf("closed %v, want the pinged connection", got)
	}
	if st := db.Stats(); st.OpenConnections != 1 {
		t.Errorf("pool: %+v, want the new connection alone", st)
	}
}

// The data source name's syntax (arrow-adbc's TestParseConnectStr, and
// its edges).
func TestDataSourceNames(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want map[string]string
	}{
		{"uri=grpc+tcp://host:443/dbname ; username=username ; password=token== ; adbc.connection.readonly=true", map[string]string{
			adbc.OptionKeyURI: "grpc+tcp://host:443/dbname", adbc.OptionKeyUsername: "username",
			adbc.OptionKeyPassword: "token==", adbc.OptionKeyReadOnly: adbc.OptionValueEnabled}},
		{"driver=/lib/x.so;entrypoint=Init;uri=file:a.db?mode=ro", map[string]string{"driver": "/lib/x.so", "entrypoint": "Init", "uri": "file:a.db?mode=ro"}},
		{"a=1;a=2;", map[string]string{"a": "2"}},
		{"a=", map[string]string{"a": ""}},
		{"", map[string]string{}},
	} {
		f := &fake{}
		if _, err := (sqldriver.Driver{Driver: f}).OpenConnector(tc.dsn); err != nil {
			t.Errorf("%q: %v", tc.dsn, err)
			continue
		}
		if !reflect.DeepEqual(f.opts, tc.want) {
			t.Errorf("%q: options %v, want %v", tc.dsn, f.opts, tc.want)
		}
	}
	for _, dsn := range []string{"a", "a=1;b", " ; x ; "} {
		_, err := sqldriver.Driver{Driver: &fake{}}.OpenConnector(dsn)
		var ae adbc.Error
		if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument {
			t.Errorf("%q: %v, want InvalidArgument", dsn, err)
		}
	}
}

func TestOptionsInCtx(t *testing.T) {
	ctx := context.Background()
	if sqldriver.GetOptionsFromCtx(ctx) != nil {
		t.Error("options in an empty context")
	}
	opts := map[string]string{"k": "v"}
	if got := sqldriver.GetOptionsFromCtx(sqldriver.SetOptionsInCtx(ctx, opts)); !reflect.DeepEqual(got, opts) {
		t.Errorf("got %v", got)
	}
}

// The database closes after its last connection, also when sql.DB.Close
// comes while a connection is still in use; Driver.Open's connection
// closes its database.
func TestDatabaseClosesAfterConnections(t *testing.T) {
	f := &fake{}
	cn, err := sqldriver.Driver{Driver: f}.OpenConnector("")
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil { // a second connection, idle
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.closedSoFar(); !reflect.DeepEqual(got, []string{"connection"}) {
		t.Errorf("closed %v while a transaction is open, want the idle connection only", got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := f.closedSoFar(); !reflect.DeepEqual(got, []string{"connection", "connection", "database"}) {
		t.Errorf("closed %v, want both connections, then the database", got)
	}
	if _, err := cn.Connect(context.Background()); !errors.Is(err, adbcerr.InvalidState) {
		t.Errorf("Connect after Close: %v", err)
	}

	f = &fake{}
	dc, err := sqldriver.Driver{Driver: f}.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.closedSoFar(); len(got) != 0 {
		t.Errorf("closed %v", got)
	}
	if err := dc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dc.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.closedSoFar(); !reflect.DeepEqual(got, []string{"connection", "database"}) {
		t.Errorf("closed %v, want the connection, then the database", got)
	}
}
