package drivermgr_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

func sqliteDB(t testing.TB, opts map[string]string) adbc.Database {
	t.Helper()
	o := map[string]string{"driver": sharedADBC(t, "libadbc_driver_sqlite.so"), "uri": "file::memory:"}
	for k, v := range opts {
		o[k] = v
	}
	db, err := drivermgr.Driver{}.NewDatabase(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Database.Close: %v", err)
		}
	})
	return db
}

func open(t *testing.T, db adbc.Database) adbc.Connection {
	t.Helper()
	c, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Connection.Close: %v", err)
		}
	})
	return c
}

func exec(t *testing.T, c adbc.Connection, sql string) int64 {
	t.Helper()
	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	n, err := st.ExecuteUpdate(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func query(t *testing.T, c adbc.Connection, sql string) []arrow.RecordBatch {
	t.Helper()
	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer r.Release()
	var out []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		out = append(out, rec)
		t.Cleanup(rec.Release)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The SQLite driver (C++, Arrow's release 24) through the manager: DDL,
// parameters bound from a Go record batch, a query streamed back, and the
// values equal.
func TestSQLiteRoundTrip(t *testing.T) {
	c := open(t, sqliteDB(t, nil))
	exec(t, c, "CREATE TABLE t (a INTEGER, b TEXT)")

	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, []bool{true, false, true})
	bld.Field(1).(*array.StringBuilder).AppendValues([]string{"one", "two", ""}, []bool{true, true, false})
	params := bld.NewRecordBatch()
	defer params.Release()

	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("INSERT INTO t VALUES (?, ?)"); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if n, err := st.ExecuteUpdate(context.Background()); err != nil || n != 3 {
		t.Fatalf("insert: %d rows, %v", n, err)
	}
	st.Close()

	recs := query(t, c, "SELECT a, b FROM t ORDER BY rowid")
	var a []string
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			a = append(a, rec.Column(0).ValueStr(i)+"/"+rec.Column(1).ValueStr(i))
		}
	}
	if got := strings.Join(a, " "); got != "1/one (null)/two 3/(null)" {
		t.Errorf("rows %q", got)
	}
}

// A syntax error is the driver's adbc.Error, found by errors.As and by
// status with errors.Is.
func TestSQLiteErrors(t *testing.T) {
	c := open(t, sqliteDB(t, nil))
	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELEC 1"); err == nil {
		_, _, err = st.ExecuteQuery(context.Background())
		if err == nil {
			t.Fatal("SELEC 1 ran")
		}
		checkSyntaxError(t, err)
	} else {
		checkSyntaxError(t, err)
	}
}

func checkSyntaxError(t *testing.T, err error) {
	t.Helper()
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code == adbc.StatusOK || !strings.Contains(ae.Msg, "syntax") {
		t.Fatalf("%v: want the driver's adbc.Error about the syntax", err)
	}
	if !errors.Is(err, adbcerr.InvalidArgument) && !errors.Is(err, adbcerr.InvalidState) && !errors.Is(err, adbcerr.IO) {
		t.Errorf("%v (status %v): errors.Is finds no sentinel of its status", err, ae.Code)
	}
	t.Logf("%v", err)
}

// Metadata calls: GetInfo, GetTableTypes, GetTableSchema, GetObjects.
func TestSQLiteMetadata(t *testing.T) {
	c := open(t, sqliteDB(t, nil))
	exec(t, c, "CREATE TABLE meta (x INTEGER, y REAL)")
	ctx := context.Background()
	r, err := c.GetInfo(ctx, []adbc.InfoCode{adbc.InfoDriverName, adbc.InfoVendorName})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		n += int(r.RecordBatch().NumRows())
	}
	r.Release()
	if n != 2 {
		t.Errorf("GetInfo: %d rows, want 2", n)
	}
	sc, err := c.GetTableSchema(ctx, nil, nil, "meta")
	if err != nil {
		t.Fatal(err)
	}
	if sc.NumFields() != 2 || sc.Field(0).Name != "x" || sc.Field(1).Name != "y" {
		t.Errorf("GetTableSchema: %v", sc)
	}
	for _, f := range []func() (array.RecordReader, error){
		func() (array.RecordReader, error) { return c.GetTableTypes(ctx) },
		func() (array.RecordReader, error) {
			return c.GetObjects(ctx, adbc.ObjectDepthAll, nil, nil, nil, nil, nil)
		},
	} {
		r, err := f()
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if err := r.Err(); err != nil || rows == 0 {
			t.Errorf("%d rows, %v", rows, err)
		}
		r.Release()
	}
}

// A query on Arrow's SQLite driver (which cannot cancel) whose context
// ends: ExecuteQuery returns the context's error at once, abandoning the
// call; the connection answers ErrAbandoned meanwhile; Close of the
// statement, the connection and the database return at once, and what the
// call made, then the connection and the database, are released when the
// driver returns: nothing is held after.
func TestSQLiteAbandonedQuery(t *testing.T) {
	base := settled(cdevice.LiveLeaks())
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": sharedADBC(t, "libadbc_driver_sqlite.so"), "uri": "file::memory:"})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 10000000) SELECT count(*) FROM g"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := st.ExecuteQuery(ctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, drivermgr.ErrAbandoned) {
		t.Fatalf("ExecuteQuery past its deadline: %v; want context.DeadlineExceeded, ErrAbandoned", err)
	}
	if err := st.SetSqlQuery("SELECT 1"); !errors.Is(err, adbcerr.InvalidState) {
		t.Errorf("a call beside the abandoned one: %v; want InvalidState", err)
	}
	closesAtOnce(t, 2*time.Second, st, cn, db) // the query itself takes seconds
	if got := settledTo(base); got != base {
		t.Errorf("after the abandoned call came back: %+v held, %+v before", got, base)
	}
}

// Bound data is validated in full before a driver sees it: a string that
// is not UTF-8 (a Go string may be anything) is InvalidArgument, through
// Bind and through BindStream, where a driver took it on trust (DuckDB's
// aborted the process).
func TestSQLiteBindIsValidated(t *testing.T) {
	c := open(t, sqliteDB(t, nil))
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.Append("\xff\xfe")
	col := b.NewArray()
	b.Release()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 1)
	defer rec.Release()
	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT ?"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(context.Background(), rec); !errors.Is(err, adbcerr.InvalidArgument) {
		t.Errorf("Bind: %v, want InvalidArgument", err)
	}
	rr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if err := st.BindStream(context.Background(), rr); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(context.Background())
	if err == nil {
		for r.Next() {
		}
		err = r.Err()
		r.Release()
	}
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("a bound stream with a string that is not UTF-8: %v, want the refusal", err)
	}
}
