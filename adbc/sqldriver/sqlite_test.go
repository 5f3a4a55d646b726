package sqldriver_test

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

type myInt int
type myString string

// valuer is a driver.Valuer of its own.
type valuer struct{ s string }

func (v valuer) Value() (driver.Value, error) { return "valuer:" + v.s, nil }

var when = time.Date(2024, time.February, 29, 13, 14, 15, 123456789, time.UTC)

// Every Go type database/sql passes, as an argument of a prepared INSERT
// (DB.Exec) and of an unprepared SELECT (DB.Query), arrives in SQLite as
// the value and storage class it should, and comes back.
func TestSQLiteArgumentsOfEveryGoType(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (name TEXT, v)")
	i64 := int64(-42)
	var nilPtr *int64
	tests := []struct {
		name  string
		arg   any
		class string // SQLite's typeof
		text  string // CAST(v AS TEXT), or "" for NULL
	}{
		{"bool true", true, "integer", "1"},
		{"bool false", false, "integer", "0"},
		{"int", int(-7), "integer", "-7"},
		{"int8", int8(math.MinInt8), "integer", "-128"},
		{"int16", int16(math.MaxInt16), "integer", "32767"},
		{"int32", int32(math.MinInt32), "integer", "-2147483648"},
		{"int64", int64(math.MaxInt64), "integer", "9223372036854775807"},
		{"uint", uint(7), "integer", "7"},
		{"uint8", uint8(255), "integer", "255"},
		{"uint16", uint16(65535), "integer", "65535"},
		{"uint32", uint32(math.MaxUint32), "integer", "4294967295"},
		{"uint64", uint64(math.MaxInt64), "integer", "9223372036854775807"},
		{"float32", float32(1.5), "real", "1.5"},
		{"float64", math.Pi, "real", "3.14159265358979"},
		{"string", "héllo, wörld", "text", "héllo, wörld"},
		{"empty string", "", "text", ""},
		{"[]byte", []byte{0, 1, 2, 0xff}, "blob", "\x00\x01\x02\xff"},
		{"time.Time", when, "text", "2024-02-29T13:14:15.123456"},
		{"nil", nil, "null", ""},
		{"nil pointer", nilPtr, "null", ""},
		{"pointer", &i64, "integer", "-42"},
		{"named int", myInt(9), "integer", "9"},
		{"named string", myString("named"), "text", "named"},
		{"sql.NullString null", sql.NullString{}, "null", ""},
		{"sql.NullString", sql.NullString{String: "ns", Valid: true}, "text", "ns"},
		{"sql.NullInt64", sql.NullInt64{Int64: 5, Valid: true}, "integer", "5"},
		{"sql.NullFloat64", sql.NullFloat64{Float64: 2.5, Valid: true}, "real", "2.5"},
		{"sql.NullBool", sql.NullBool{Bool: true, Valid: true}, "integer", "1"},
		{"sql.NullTime", sql.NullTime{Time: when, Valid: true}, "text", "2024-02-29T13:14:15.123456"},
		{"sql.Null[int32]", sql.Null[int32]{V: 3, Valid: true}, "integer", "3"},
		{"driver.Valuer", valuer{"x"}, "text", "valuer:x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Exec("INSERT INTO t VALUES (?, ?)", tc.name, tc.arg)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				t.Errorf("RowsAffected = %d, %v; want 1", n, err)
			}
			var class string
			var text sql.NullString
			if err := db.QueryRow("SELECT typeof(v), CAST(v AS TEXT) FROM t WHERE name = ?", tc.name).Scan(&class, &text); err != nil {
				t.Fatal(err)
			}
			if class != tc.class || text.String != tc.text {
				t.Errorf("stored %s %q; want %s %q", class, text.String, tc.class, tc.text)
			}
			// The same argument of an unprepared query.
			if err := db.QueryRow("SELECT typeof(?1), CAST(?1 AS TEXT)", tc.arg).Scan(&class, &text); err != nil {
				t.Fatal(err)
			}
			if class != tc.class || text.String != tc.text {
				t.Errorf("selected %s %q; want %s %q", class, text.String, tc.class, tc.text)
			}
		})
	}
}

// Arrow's own value types bind as such to a prepared statement (SQLite
// writes a date32 as ISO text); those that need a unit from the parameter
// schema, which SQLite does not give, fail.
func TestSQLiteArrowArguments(t *testing.T) {
	db := openSQLite(t)
	var s string
	if err := db.QueryRow("SELECT ?", arrow.Date32FromTime(when)).Scan(&s); err != nil || s != "19782" {
		t.Errorf("arrow.Date32 to an unprepared query (converted to int64): %q, %v", s, err)
	}
	st, err := db.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.QueryRow(arrow.Date32FromTime(when)).Scan(&s); err != nil || s != "2024-02-29" {
		t.Errorf("arrow.Date32: %q, %v", s, err)
	}
	ts, _ := arrow.TimestampFromTime(when, arrow.Second)
	err = st.QueryRow(ts).Scan(&s)
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !strings.Contains(ae.Msg, "parameter schema") {
		t.Errorf("arrow.Timestamp without a parameter type: %v", err)
	}
}

// Values of SQLite's storage classes scan into every Go type database/sql
// converts them to, NULL into sql.Null*, pointers and any.
func TestSQLiteScanIntoEveryGoType(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, z INTEGER)")
	mustExec(t, db, "INSERT INTO t VALUES (?, ?, ?, ?, ?)", 1, 2.5, "2024-02-29T13:14:15Z", []byte("blob"), nil)

	var (
		i    int
		i8   int8
		i16  int16
		i32  int32
		i64  int64
		u    uint
		u8   uint8
		u16  uint16
		u32  uint32
		u64  uint64
		f32  float32
		f64  float64
		bl   bool
		istr string
		ib   []byte
		iany any
		r64  float64
		rstr string
		rany any
		s    string
		sb   []byte
		sany any
		b    []byte
		bstr string
		bany any
		zany any
		zp   *int64
		zn   sql.NullInt64
		zs   sql.NullString
		zf   sql.NullFloat64
		zb   sql.NullBool
		zt   sql.NullTime
		zg   sql.Null[string]
		ip   *int64
		in   sql.NullInt64
	)
	row := db.QueryRow(`SELECT i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i,
		r, r, r, s, s, s, b, b, b, z, z, z, z, z, z, z, z, i, i FROM t`)
	if err := row.Scan(&i, &i8, &i16, &i32, &i64, &u, &u8, &u16, &u32, &u64, &f32, &f64, &bl, &istr, &ib, &iany,
		&r64, &rstr, &rany, &s, &sb, &sany, &b, &bstr, &bany, &zany, &zp, &zn, &zs, &zf, &zb, &zt, &zg, &ip, &in); err != nil {
		t.Fatal(err)
	}
	got := []any{i, i8, i16, i32, i64, u, u8, u16, u32, u64, f32, f64, bl, istr, ib, iany,
		r64, rstr, rany, s, sb, sany, b, bstr, bany, zany, zp, zn, zs, zf, zb, zt, zg, *ip, in}
	want := []any{1, int8(1), int16(1), int32(1), int64(1), uint(1), uint8(1), uint16(1), uint32(1), uint64(1), float32(1), float64(1), true, "1", []byte("1"), int64(1),
		2.5, "2.5", 2.5, "2024-02-29T13:14:15Z", []byte("2024-02-29T13:14:15Z"), "2024-02-29T13:14:15Z", []byte("blob"), "blob", []byte("blob"),
		nil, (*int64)(nil), sql.NullInt64{}, sql.NullString{}, sql.NullFloat64{}, sql.NullBool{}, sql.NullTime{}, sql.Null[string]{},
		int64(1), sql.NullInt64{Int64: 1, Valid: true}}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("value %d: got %#v, want %#v", k, got[k], want[k])
		}
	}

	// SQLite stores times as text: they scan as strings, and a time.Time
	// comes back through parsing (Arrow timestamps scan into time.Time
	// directly: see TestArrowTypesScan).
	var ts string
	if err := db.QueryRow("SELECT ?", when).Scan(&ts); err != nil {
		t.Fatal(err)
	}
	if back, err := time.Parse("2006-01-02T15:04:05.999999", ts); err != nil || !back.Equal(when.Truncate(time.Microsecond)) {
		t.Errorf("time.Time came back as %q (%v, %v)", ts, back, err)
	}

	// Conversions database/sql refuses are errors, not panics.
	if err := db.QueryRow("SELECT s FROM t").Scan(&i); err == nil {
		t.Error("scanning text into an int did not fail")
	}
	if err := db.QueryRow("SELECT z FROM t").Scan(&i); err == nil {
		t.Error("scanning NULL into an int did not fail")
	}
	if err := db.QueryRow("SELECT 300").Scan(&i8); err == nil {
		t.Error("scanning 300 into an int8 did not fail")
	}
}

// sql.RawBytes views the value until the next row; the bytes stay right
// across batches.
func TestSQLiteRawBytesAndBatches(t *testing.T) {
	db := openSQLite(t)
	// More rows than one batch of the driver (1024 by default).
	rows, err := db.Query(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 5000)
		SELECT x, 'row ' || x, zeroblob(x % 7) FROM c`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var x int
		var s sql.RawBytes
		var b []byte
		if err := rows.Scan(&x, &s, &b); err != nil {
			t.Fatal(err)
		}
		n++
		if x != n || string(s) != fmt.Sprintf("row %d", n) || !bytes.Equal(b, make([]byte, n%7)) {
			t.Fatalf("row %d: %d %q %v", n, x, s, b)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 5000 {
		t.Errorf("%d rows, want 5000", n)
	}
}

// Values scanned into *any and strings stay valid after the rows (and
// their Arrow batches) are gone.
func TestSQLiteValuesOutliveRows(t *testing.T) {
	db := openSQLite(t)
	rows, err := db.Query(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3000)
		SELECT printf('%08d', x), CAST(printf('%08d', x) AS BLOB) FROM c`)
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	var anys []any
	for rows.Next() {
		var s string
		var a any
		if err := rows.Scan(&s, &a); err != nil {
			t.Fatal(err)
		}
		strs, anys = append(strs, s), append(anys, a)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// Churn the heap and the C heap so that freed memory is reused.
	for range 3 {
		var b []byte
		if err := db.QueryRow("SELECT zeroblob(100000), 'x'").Scan(&b, new(string)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range strs {
		want := fmt.Sprintf("%08d", i+1)
		if strs[i] != want || string(anys[i].([]byte)) != want {
			t.Fatalf("row %d is now %q, %q", i+1, strs[i], anys[i])
		}
	}
}

// NULLs in every storage class, an all-NULL column, and NULL parameters.
func TestSQLiteNulls(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)")
	mustExec(t, db, "INSERT INTO t VALUES (?, ?, ?, ?)", nil, nil, nil, nil)
	mustExec(t, db, "INSERT INTO t VALUES (?, ?, ?, ?)", sql.NullInt64{}, sql.NullFloat64{}, sql.NullString{}, (*[]byte)(nil))
	rows, err := db.Query("SELECT i, r, s, b FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		var i sql.NullInt64
		var r sql.NullFloat64
		var s *string
		var b any
		if err := rows.Scan(&i, &r, &s, &b); err != nil {
			t.Fatal(err)
		}
		if i.Valid || r.Valid || s != nil || b != nil {
			t.Errorf("row %d: %v %v %v %v, want NULLs", n, i, r, s, b)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
	var cnt int
	if err := db.QueryRow("SELECT count(*) FROM t WHERE i IS NULL AND r IS NULL AND s IS NULL AND b IS NULL").Scan(&cnt); err != nil || cnt != 2 {
		t.Errorf("count of NULL rows = %d, %v", cnt, err)
	}
	// NULL comparisons through a parameter.
	if err := db.QueryRow("SELECT count(*) FROM t WHERE i IS ?", nil).Scan(&cnt); err != nil || cnt != 2 {
		t.Errorf("count WHERE i IS NULL parameter = %d, %v", cnt, err)
	}
}

// Queries without rows: an empty table, a WHERE that matches nothing,
// QueryRow's sql.ErrNoRows, and statements that return no result set.
func TestSQLiteEmptyResults(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER, b TEXT)")
	for _, q := range []string{"SELECT a, b FROM t", "SELECT a, b FROM t WHERE a = 1"} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil || !reflect.DeepEqual(cols, []string{"a", "b"}) {
			t.Errorf("%s: columns %v, %v", q, cols, err)
		}
		if rows.Next() {
			t.Errorf("%s: a row", q)
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
		if err := rows.Close(); err != nil {
			t.Error(err)
		}
	}
	var a int
	if err := db.QueryRow("SELECT a FROM t").Scan(&a); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("QueryRow on an empty table: %v, want sql.ErrNoRows", err)
	}
	res := mustExec(t, db, "DELETE FROM t WHERE a = 1")
	if n, err := res.RowsAffected(); err != nil || n != 0 {
		t.Errorf("RowsAffected of a DELETE of nothing = %d, %v", n, err)
	}
	if _, err := res.LastInsertId(); err == nil {
		t.Error("LastInsertId did not fail")
	}
	// A query run through Exec, and DDL through Query.
	mustExec(t, db, "SELECT 1")
	rows, err := db.Query("CREATE TABLE u (x)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		t.Error("DDL returned a row")
	}
	if err := rows.Close(); err != nil {
		t.Error(err)
	}
}

// Multi-row statements report the rows they affected.
func TestSQLiteRowsAffected(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER)")
	mustExec(t, db, "INSERT INTO t VALUES (1), (2), (3), (4)")
	for _, tc := range []struct {
		q    string
		args []any
		n    int64
	}{
		{"UPDATE t SET a = a + 10 WHERE a > ?", []any{2}, 2},
		{"DELETE FROM t WHERE a < ?", []any{10}, 2},
		{"INSERT INTO t SELECT a FROM t", nil, 2},
	} {
		n, err := mustExec(t, db, tc.q, tc.args...).RowsAffected()
		if err != nil || n != tc.n {
			t.Errorf("%s: RowsAffected %d, %v; want %d", tc.q, n, err, tc.n)
		}
	}
}

// The column metadata of a result, as arrow-adbc's example shows it for
// "SELECT ?".
func TestSQLiteColumnTypes(t *testing.T) {
	db := openSQLite(t)
	rows, err := db.Query("SELECT ?", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || !reflect.DeepEqual(cols, []string{"?"}) {
		t.Errorf("Columns = %v, %v", cols, err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	nullable, ok := cts[0].Nullable()
	if cts[0].Name() != "?" || !nullable || !ok {
		t.Errorf("column %q nullable %v %v", cts[0].Name(), nullable, ok)
	}
	if cts[0].DatabaseTypeName() != "int64" || cts[0].ScanType() != reflect.TypeFor[int64]() {
		t.Errorf("type %q, scan type %v", cts[0].DatabaseTypeName(), cts[0].ScanType())
	}
	if _, _, ok := cts[0].DecimalSize(); ok {
		t.Error("DecimalSize ok for an int64")
	}
	if _, ok := cts[0].Length(); ok {
		t.Error("Length ok for an int64")
	}
	var v int64
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(&v); err != nil || v != 1 {
		t.Errorf("Scan: %d, %v", v, err)
	}

	rows2, err := db.Query("SELECT 1.5 AS r, 'x' AS s, x'00' AS b")
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	cts, err = rows2.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, db string
		scan     reflect.Type
		length   bool
	}{
		{"r", "float64", reflect.TypeFor[float64](), false},
		{"s", "utf8", reflect.TypeFor[string](), true},
		{"b", "binary", reflect.TypeFor[[]byte](), true},
	}
	for i, w := range want {
		l, lok := cts[i].Length()
		if cts[i].Name() != w.name || cts[i].DatabaseTypeName() != w.db || cts[i].ScanType() != w.scan || lok != w.length || lok && l != math.MaxInt64 {
			t.Errorf("column %d: %q %q %v length %d %v", i, cts[i].Name(), cts[i].DatabaseTypeName(), cts[i].ScanType(), l, lok)
		}
	}
}

// Commit keeps a transaction's writes and Rollback drops them; either way
// the connection is back in autocommit mode afterwards (what it writes is
// visible to other connections at once).
func TestSQLiteTransactions(t *testing.T) {
	db := openSQLite(t)
	db.SetMaxOpenConns(2)
	mustExec(t, db, "CREATE TABLE t (a INTEGER)")
	ctx := context.Background()
	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (?)", 1)
	mustExec(t, tx, "INSERT INTO t VALUES (?)", 2)
	var inside int
	if err := tx.QueryRow("SELECT count(*) FROM t").Scan(&inside); err != nil || inside != 2 {
		t.Errorf("count inside the transaction = %d, %v", inside, err)
	}
	if n := count(); n != 0 {
		t.Errorf("another connection sees %d uncommitted rows", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d rows after Commit, want 2", n)
	}
	if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("Rollback after Commit: %v", err)
	}

	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (3)")
	mustExec(t, tx, "DELETE FROM t WHERE a = 1")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d rows after Rollback, want 2", n)
	}

	// Every connection of the pool is in autocommit mode again: a write
	// on each is visible to the others.
	conns := make([]*sql.Conn, 2)
	for i := range conns {
		if conns[i], err = db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		var ac string
		err := conns[i].Raw(func(dc any) error {
			ac, err = dc.(sqldriver.Conn).ADBCConnection().(adbc.GetSetOptions).GetOption(adbc.OptionKeyAutoCommit)
			return err
		})
		if err != nil || ac != adbc.OptionValueEnabled {
			t.Errorf("connection %d: autocommit %q, %v", i, ac, err)
		}
	}
	if _, err := conns[0].ExecContext(ctx, "INSERT INTO t VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conns[1].QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Errorf("the other connection counts %d, %v; want 3", n, err)
	}
	for _, c := range conns {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}

	// A read-only transaction starts (SQLite ignores the option), and an
	// isolation level ADBC lacks fails without disturbing the connection.
	tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelWriteCommitted})
	if !errors.Is(err, adbcerr.NotImplemented) {
		t.Errorf("LevelWriteCommitted: %v, want StatusNotImplemented", err)
	}
	mustExec(t, db, "INSERT INTO t VALUES (5)")
	if n := count(); n != 4 {
		t.Errorf("%d rows, want 4", n)
	}

	// A transaction whose context ends is rolled back.
	cctx, cancel := context.WithCancel(ctx)
	tx, err = db.BeginTx(cctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (6)")
	cancel()
	if err := tx.Commit(); err == nil {
		t.Error("Commit after the context ended did not fail")
	}
	if n := count(); n != 4 {
		t.Errorf("%d rows after a cancelled transaction, want 4", n)
	}
}

// A prepared statement runs many times, inside and outside transactions,
// with its rows open or not.
func TestSQLitePreparedStatements(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER, b TEXT)")
	ins, err := db.Prepare("INSERT INTO t VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	for i := range 100 {
		res, err := ins.Exec(i, fmt.Sprint("v", i))
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("RowsAffected %d", n)
		}
	}
	if _, err := ins.Exec(1); err == nil || !strings.Contains(err.Error(), "expected 2 arguments, got 1") {
		t.Errorf("one argument of two: %v", err)
	}

	sel, err := db.Prepare("SELECT b FROM t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	for i := range 100 {
		var b string
		if err := sel.QueryRow(i).Scan(&b); err != nil || b != fmt.Sprint("v", i) {
			t.Fatalf("row %d: %q, %v", i, b, err)
		}
	}

	// Within a transaction, the statement is prepared once on its
	// connection; two of its results open at once stay apart.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	txsel := tx.Stmt(sel)
	r1, err := txsel.Query(1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := txsel.Query(2)
	if err != nil {
		t.Fatal(err)
	}
	r3, err := txsel.Query(3)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []*sql.Rows{r1, r2, r3} {
		var b string
		if !r.Next() {
			t.Fatalf("result %d: no row: %v", i+1, r.Err())
		}
		if err := r.Scan(&b); err != nil || b != fmt.Sprint("v", i+1) {
			t.Errorf("result %d: %q, %v", i+1, b, err)
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
	txins := tx.Stmt(ins)
	for i := 100; i < 110; i++ {
		if _, err := txins.Exec(i, "tx"); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t WHERE b = ?", "tx").Scan(&n); err != nil || n != 10 {
		t.Errorf("%d rows written through the transaction's statement, %v", n, err)
	}
}

// database/sql's pool: at most SetMaxOpenConns connections serve 16
// goroutines; and 16 goroutines each with a connection of their own
// (sql.Conn) query at once.
func TestSQLiteConcurrency(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER, b TEXT)")
	for i := range 1000 {
		mustExec(t, db, "INSERT INTO t VALUES (?, ?)", i, fmt.Sprint("v", i))
	}
	sum := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, lo, hi int) (int, error) {
		rows, err := q.QueryContext(context.Background(), "SELECT a, b FROM t WHERE a >= ? AND a < ? ORDER BY a", lo, hi)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		s, want := 0, lo
		for rows.Next() {
			var a int
			var b string
			if err := rows.Scan(&a, &b); err != nil {
				return 0, err
			}
			if a != want || b != fmt.Sprint("v", a) {
				return 0, fmt.Errorf("row %d %q, want %d", a, b, want)
			}
			want++
			s += a
		}
		return s, rows.Err()
	}
	run := func(t *testing.T, q func(g int) (interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, func())) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := range 16 {
			wg.Go(func() {
				qq, done := q(g)
				defer done()
				for k := range 20 {
					lo := (g*37 + k*101) % 900
					s, err := sum(qq, lo, lo+100)
					if err == nil && s != 100*lo+4950 {
						err = fmt.Errorf("sum %d, want %d", s, 100*lo+4950)
					}
					if err != nil {
						errs <- fmt.Errorf("goroutine %d query %d: %w", g, k, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	// Connections of one SQLite file opening and reading at once may find
	// it busy (SQLITE_BUSY, "database is locked", seen once in CI): as an
	// application would, each connection waits instead (busy_timeout), and
	// the pool keeps the four it is given rather than opening others.
	patient := func(t *testing.T) *sql.Conn {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ms int
		if err := c.QueryRowContext(context.Background(), "PRAGMA busy_timeout = 10000").Scan(&ms); err != nil || ms != 10000 {
			t.Fatalf("busy_timeout: %d, %v", ms, err)
		}
		return c
	}
	t.Run("pool", func(t *testing.T) {
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
		var warm []*sql.Conn
		for range 4 {
			warm = append(warm, patient(t))
		}
		for _, c := range warm {
			c.Close()
		}
		run(t, func(int) (interface {
			QueryContext(context.Context, string, ...any) (*sql.Rows, error)
		}, func()) {
			return db, func() {}
		})
		if st := db.Stats(); st.MaxOpenConnections != 4 || st.OpenConnections > 4 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("conns", func(t *testing.T) {
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
		conns := make([]*sql.Conn, 16)
		for g := range conns {
			conns[g] = patient(t)
		}
		run(t, func(g int) (interface {
			QueryContext(context.Context, string, ...any) (*sql.Rows, error)
		}, func()) {
			return conns[g], func() { conns[g].Close() }
		})
	})
}

// A context done before a call fails it; one that ends while rows are
// read stops them, and the connection serves the next query.
func TestSQLiteContext(t *testing.T) {
	db := openSQLite(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE t (a INTEGER)")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.QueryContext(ctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("QueryContext: %v", err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1)"); !errors.Is(err, context.Canceled) {
		t.Errorf("ExecContext: %v", err)
	}
	if _, err := db.BeginTx(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("BeginTx: %v", err)
	}
	if err := db.PingContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("PingContext: %v", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	if _, err := db.ExecContext(dctx, "INSERT INTO t VALUES (1)"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ExecContext past its deadline: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000000000)
		SELECT x FROM c`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		if n++; n == 3000 {
			cancel()
		}
		if n > 100000 {
			t.Fatal("rows went on after the cancel")
		}
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("rows.Err after cancel: %v (%d rows)", err, n)
	}
	if err := rows.Close(); err != nil {
		t.Error(err)
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("the next query: %d, %v", one, err)
	}
	mustExec(t, db, "INSERT INTO t VALUES (1)")
}

// The driver's errors come back as adbc.Error, through database/sql's
// wrapping; database/sql's own checks and this package's fail cleanly.
func TestSQLiteErrors(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'x')")
	for _, tc := range []struct {
		name string
		run  func() error
		code adbc.Status
	}{
		{"syntax error, Exec", func() error { _, err := db.Exec("SELEC 1"); return err }, adbc.StatusInvalidArgument},
		{"syntax error, Query", func() error { _, err := db.Query("SELEC 1"); return err }, adbc.StatusInvalidArgument},
		{"syntax error, Prepare", func() error { _, err := db.Prepare("SELEC 1"); return err }, adbc.StatusInvalidArgument},
		{"no such table", func() error { _, err := db.Query("SELECT * FROM nope"); return err }, adbc.StatusInvalidArgument},
		{"unique", func() error { _, err := db.Exec("INSERT INTO t VALUES (1, 'y')"); return err }, adbc.StatusIO},
		{"not null", func() error { _, err := db.Exec("INSERT INTO t VALUES (?, ?)", 2, nil); return err }, adbc.StatusIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			var ae adbc.Error
			if !errors.As(err, &ae) {
				t.Fatalf("%v (%T) is no adbc.Error", err, err)
			}
			if ae.Code != tc.code || ae.Msg == "" {
				t.Errorf("code %v, message %q; want %v", ae.Code, ae.Msg, tc.code)
			}
		})
	}

	// database/sql's and this package's checks.
	var ae adbc.Error
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", 3, struct{}{}); err == nil {
		t.Error("a struct argument did not fail")
	}
	if _, err := db.Query("SELECT ?", struct{}{}); err == nil {
		t.Error("a struct argument to Query did not fail")
	}
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", 3, "x", 4); !errors.Is(err, adbcerr.InvalidArgument) || !strings.Contains(err.Error(), "too many parameters") {
		t.Errorf("three arguments for two: %v", err)
	}
	if _, err := db.Query("SELECT ?", uint64(math.MaxUint64)); err == nil {
		t.Error("uint64 above int64's range to Query did not fail")
	}
	_, err := db.Exec("SELECT ?", uint64(math.MaxUint64))
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument {
		t.Errorf("uint64 above int64's range to Exec: %v (SQLite refuses it)", err)
	}
	// Named parameters of a prepared statement bind by name, with or
	// without their prefix (which database/sql's names cannot have).
	if _, err := db.Exec("SELECT :a", sql.Named("b", 1)); !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument {
		t.Errorf("an unknown named parameter: %v", err)
	}
	st, err := db.Prepare("SELECT :a, @b, $c")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var a, b, c int
	if err := st.QueryRow(sql.Named("c", 3), sql.Named("a", 1), sql.Named("b", 2)).Scan(&a, &b, &c); err != nil || a != 1 || b != 2 || c != 3 {
		t.Errorf("named parameters: %d %d %d, %v", a, b, c, err)
	}

	// Bad data source names and drivers fail sql.Open.
	for _, dsn := range []string{"driver", "driver=" + sqlitePath(t) + ";uri", "driver=/nonexistent/libnothing.so"} {
		if _, err := sql.Open("adbc", dsn); !errors.As(err, &ae) {
			t.Errorf("sql.Open(%q): %v, want an adbc.Error", dsn, err)
		}
	}
}

// Ping reaches the driver; a connection whose ADBC connection is gone
// fails Ping, leaves the pool, and the pool opens a new one.
func TestSQLitePingAndBadConnections(t *testing.T) {
	db := openSQLite(t)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Raw(func(dc any) error { return dc.(sqldriver.Conn).ADBCConnection().Close() }); err != nil {
		t.Fatal(err)
	}
	err = c.PingContext(ctx)
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidState {
		t.Errorf("Ping of a closed connection: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("Ping with a new connection: %v", err)
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("query on the new connection: %d, %v", one, err)
	}
	if st := db.Stats(); st.OpenConnections != 1 || st.MaxIdleClosed+st.MaxLifetimeClosed+st.MaxIdleTimeClosed != 0 {
		t.Logf("stats %+v", st)
	}
}

// sql.Conn.Raw reaches the ADBC connection: its Arrow streams, its
// metadata and options; arrow-adbc's exported field Conn is there too.
func TestSQLiteRawArrow(t *testing.T) {
	db := openSQLite(t)
	mustExec(t, db, "CREATE TABLE t (a INTEGER, b TEXT)")
	for i := range 3000 {
		mustExec(t, db, "INSERT INTO t VALUES (?, ?)", i, fmt.Sprint("v", i))
	}
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		conn, ok := dc.(sqldriver.Conn)
		if !ok {
			return fmt.Errorf("%T is no sqldriver.Conn", dc)
		}
		cn := conn.ADBCConnection()
		if f := reflect.ValueOf(dc).Elem().FieldByName("Conn"); !f.IsValid() || f.Interface() != cn {
			t.Error("the driver.Conn has no field Conn holding the adbc.Connection")
		}
		if _, ok := cn.(drivermgr.Canceller); !ok {
			t.Errorf("the adbc.Connection is a %T", cn)
		}
		st, err := cn.NewStatement()
		if err != nil {
			return err
		}
		defer st.Close()
		if err := st.SetSqlQuery("SELECT a, b FROM t ORDER BY a"); err != nil {
			return err
		}
		rdr, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			return err
		}
		defer rdr.Release()
		if got := rdr.Schema().String(); !strings.Contains(got, "a: type=int64") || !strings.Contains(got, "b: type=utf8") {
			t.Errorf("schema %s", got)
		}
		rows, batches := 0, 0
		for rdr.Next() {
			rec := rdr.RecordBatch()
			batches++
			for i := range int(rec.NumRows()) {
				if a := rec.Column(0).ValueStr(i); a != fmt.Sprint(rows) {
					return fmt.Errorf("row %d: a = %s", rows, a)
				}
				rows++
			}
		}
		if err := rdr.Err(); err != nil {
			return err
		}
		if rows != 3000 || batches < 2 {
			t.Errorf("%d rows in %d batches", rows, batches)
		}
		types, err := cn.GetTableTypes(ctx)
		if err != nil {
			return err
		}
		for types.Next() {
		}
		types.Release()
		sc, err := cn.GetTableSchema(ctx, nil, nil, "t")
		if err != nil {
			return err
		}
		if sc.NumFields() != 2 || sc.Field(0).Type.ID() != arrow.INT64 {
			t.Errorf("table schema %s", sc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The connection still serves database/sql.
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 3000 {
		t.Errorf("count %d, %v", n, err)
	}
}

// Driver.Open and Driver.OpenConnector, used directly, and sql.OpenDB.
func TestSQLiteDriverDirectly(t *testing.T) {
	d := sqldriver.Driver{Driver: drivermgr.Driver{}}
	dsn := sqliteDSN(t)
	dc, err := d.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	qc := dc.(driver.QueryerContext)
	rows, err := qc.QueryContext(context.Background(), "SELECT ?1 + 1", []driver.NamedValue{{Ordinal: 1, Value: int64(41)}})
	if err != nil {
		t.Fatal(err)
	}
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil || dest[0] != int64(42) {
		t.Errorf("Next: %v, %v", dest[0], err)
	}
	if err := rows.Close(); err != nil {
		t.Error(err)
	}
	// The deprecated entry points work too.
	//lint:ignore SA1019 the deprecated interface is part of the API
	rows, err = dc.(driver.Queryer).Query("SELECT ?", []driver.Value{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.Next(dest); err != nil || dest[0] != "x" {
		t.Errorf("Next: %v, %v", dest[0], err)
	}
	rows.Close()
	st, err := dc.Prepare("SELECT ? * 2")
	if err != nil {
		t.Fatal(err)
	}
	if st.NumInput() != 1 {
		t.Errorf("NumInput %d", st.NumInput())
	}
	//lint:ignore SA1019 the deprecated method is part of the API
	rows, err = st.Query([]driver.Value{int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.Next(dest); err != nil || dest[0] != int64(8) {
		t.Errorf("Next: %v, %v", dest[0], err)
	}
	rows.Close()
	//lint:ignore SA1019 the deprecated method is part of the API
	if _, err := st.Exec([]driver.Value{int64(4)}); err != nil {
		t.Error(err)
	}
	st.Close()
	//lint:ignore SA1019 the deprecated method is part of the API
	tx, err := dc.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Error(err)
	}
	if err := dc.Close(); err != nil {
		t.Error(err)
	}

	cn, err := d.OpenConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if drv, ok := cn.Driver().(sqldriver.Driver); !ok || drv.Driver == nil {
		t.Errorf("Connector.Driver() = %#v", cn.Driver())
	}
	db := sql.OpenDB(cn)
	var s string
	if err := db.QueryRow("SELECT sqlite_version()").Scan(&s); err != nil || s == "" {
		t.Errorf("sqlite_version: %q, %v", s, err)
	}
	if err := db.Close(); err != nil { // closes the connector's database
		t.Error(err)
	}
}

// Rows of a fast stream stop when their context ends, as database/sql
// promises: no row whose Next began after the cancel, Err wraps
// context.Canceled. (SQLite's driver cannot cancel: what stops the read
// is the manager, not the database.)
func TestSQLiteCancelStopsRows(t *testing.T) {
	db := openSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c LIMIT 50000000")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("the first row: %v", rows.Err())
	}
	cancel()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); n > 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("%d rows after the cancel, Err() = %v; want none and context.Canceled", n, err)
	}
}
