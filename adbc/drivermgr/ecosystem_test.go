package drivermgr_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	arrowsql "github.com/apache/arrow-adbc/go/adbc/sqldriver"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// Code typed on arrow-adbc's package takes drivermgr's values: its
// context adapters over our database, connection and statement, on
// Arrow's SQLite driver, and errors that errors.As finds as arrow-adbc's
// adbc.Error while errors.Is matches them by status.
func TestArrowADBCContextAdapters(t *testing.T) {
	ctx := context.Background()
	var drv adbc.DriverWithContext = drivermgr.Driver{}
	db, err := drv.NewDatabaseWithContext(ctx, map[string]string{"driver": sharedADBC(t, "libadbc_driver_sqlite.so"), "uri": "file::memory:"})
	if err != nil {
		t.Fatal(err)
	}
	dbc := adbc.AsDatabaseContext(db)
	defer dbc.Close(ctx)
	cn, err := dbc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close(ctx)
	st, err := cn.NewStatement(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	if err := st.SetSqlQuery(ctx, "SELECT 6 * 7 AS answer"); err != nil {
		t.Fatal(err)
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rdr.Next() {
		n += int(rdr.RecordBatch().NumRows())
	}
	rdr.Release()
	if n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
	if err := st.SetSqlQuery(ctx, "SELECT * FROM no_such_table"); err != nil {
		t.Fatal(err)
	}
	_, _, err = st.ExecuteQuery(ctx)
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !errors.Is(err, adbcerr.InvalidArgument) {
		t.Errorf("a query of a missing table: %v (%+v); want arrow-adbc's adbc.Error of InvalidArgument, matched by adbcerr", err, ae)
	}
}

// arrow-adbc's own database/sql driver over drivermgr, unchanged: a table
// made, filled through parameters and read back.
func TestArrowADBCSQLDriver(t *testing.T) {
	lib := sharedADBC(t, "libadbc_driver_sqlite.so")
	cn, err := arrowsql.Driver{Driver: drivermgr.Driver{}}.OpenConnector("driver=" + lib + ";uri=file:" + filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (k INTEGER, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{"one", "two", "three"} {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", int64(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
	// arrow-adbc's rows hand out strings that alias the driver's batch
	// (zero-copy, as over its own cgo manager), valid until the rows move
	// on or close: QueryRow's Scan, which closes them before it returns,
	// would leave a string of freed memory. Copied while the rows are open.
	rows, err := db.Query("SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY k)")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = strings.Clone(v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if got != "one,two,three" {
		t.Errorf("read back %q", got)
	}
}
