package sqldriver_test

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

// Register the driver manager under a name, and open a SQLite database
// through it. (arrow-adbc's example, which finds the driver by its name on
// the library search path.)
func Example() {
	sql.Register("adbc-example", sqldriver.Driver{Driver: drivermgr.Driver{}})

	db, err := sql.Open("adbc-example", "driver=adbc_driver_sqlite;entrypoint=AdbcDriverInit")
	if err != nil {
		panic(err)
	}
	defer db.Close()

	rows, err := db.Query("SELECT ?", 1)
	if err != nil {
		panic(err)
	}
	defer rows.Close()

	cols, err := rows.ColumnTypes()
	if err != nil {
		panic(err)
	}
	fmt.Println(cols[0].Name(), cols[0].DatabaseTypeName())
	fmt.Println(cols[0].Nullable())
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			panic(err)
		}
		fmt.Println(v)
	}
	// Prints:
	// ? int64
	// true true
	// 1
}

// Reach the ADBC connection beneath a database/sql connection, and read a
// query's result as Arrow record batches.
func ExampleConn() {
	ctx := context.Background()
	db, err := sql.Open("adbc", "driver=adbc_driver_sqlite")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	err = conn.Raw(func(dc any) error {
		st, err := dc.(sqldriver.Conn).ADBCConnection().NewStatement()
		if err != nil {
			return err
		}
		defer st.Close()
		if err := st.SetSqlQuery("SELECT 1 AS a, 'x' AS b"); err != nil {
			return err
		}
		rdr, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			fmt.Println(rec.Schema(), rec.NumRows())
		}
		return rdr.Err()
	})
	if err != nil {
		panic(err)
	}
}
