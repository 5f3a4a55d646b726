// A program of a new user's: the module fetched by version (no replace),
// built with CGO_ENABLED=0, the root package and drivermgr in use through
// arrow-adbc's interfaces. Its argument: an ADBC driver (Arrow's SQLite).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(driver string) error {
	s := cdevice.New[abi.Schema]() // the root package: an off-heap C struct
	cdevice.Free(s)
	ctx := context.Background()
	var drv adbc.Driver = drivermgr.Driver{}
	db, err := drv.NewDatabase(map[string]string{"driver": driver})
	if err != nil {
		return err
	}
	defer db.Close()
	cnxn, err := db.Open(ctx)
	if err != nil {
		return err
	}
	defer cnxn.Close()
	st, err := cnxn.NewStatement()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT 41 + 1 AS answer"); err != nil {
		return err
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return err
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		fmt.Printf("%s = %d\n", rec.ColumnName(0), rec.Column(0).(*array.Int64).Value(0))
	}
	return rdr.Err()
}
