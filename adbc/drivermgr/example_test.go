package drivermgr_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// Load Arrow's SQLite driver (by a manifest sqlite.toml in a search
// directory, else libsqlite.so from the system's loader), run a query and
// read its result as it streams in.
func Example() {
	ctx := context.Background()
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{
		"driver": "sqlite",
		"uri":    "file:demo.db",
	})
	if err != nil {
		panic(err) // errors.Is(err, drivermgr.ErrLoad) when the driver is not found
	}
	defer db.Close()
	conn, err := db.Open(ctx)
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	st, err := conn.NewStatement()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT 1 AS one, 'two' AS two"); err != nil {
		panic(err)
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		panic(err)
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		fmt.Println(rec.NumRows(), rec.Schema().Field(0).Name, rec.Column(1))
	}
	if err := rdr.Err(); err != nil {
		panic(err)
	}
	// Prints:
	// 1 one ["two"]
}

// A connection profile names the driver and its options; the program
// names the profile (here warehouse.toml in $ADBC_PROFILE_PATH or
// ~/.config/adbc/profiles), and what it sets itself wins over the
// profile's options.
func Example_profile() {
	// warehouse.toml:
	//
	//	profile_version = 1
	//	driver = "postgresql"
	//	[Options]
	//	uri = "postgresql://app:{{ env_var(PGPASSWORD) }}@db.internal/app"
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"uri": "profile://warehouse"})
	var ae adbc.Error
	switch {
	case errors.Is(err, adbcerr.NotFound):
		fmt.Println("no such profile, or its driver is not installed:", err)
		return
	case errors.As(err, &ae):
		fmt.Println(ae.Code, ae.SqlState, ae.Msg)
		return
	case err != nil:
		panic(err)
	}
	defer db.Close()
}
