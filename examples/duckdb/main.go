// Command duckdb runs SQL in DuckDB from Go built with CGO_ENABLED=0:
// libduckdb is loaded while the program runs (purego) and data crosses as
// Arrow C streams (cdevice):
//
//   - query: DuckDB's ADBC driver (duckdb_adbc_init, AdbcStatementExecuteQuery)
//     fills an ArrowArrayStream, which stream.ImportReader turns into an
//     array.RecordReader;
//   - ingest: Go record batches go to DuckDB as an ArrowArrayStream
//     (stream.ExportReader), bound to an ADBC bulk-ingest statement
//     (AdbcStatementBindStream), or registered as a view with the C API's
//     duckdb_arrow_scan;
//   - device: a result is copied onto the default device (loader.Default)
//     and handed on as an ArrowDeviceArrayStream (stream.ExportReaderToDevice).
//
// Usage:
//
//	go run ./examples/duckdb [-lib PATH] [-device] [SQL]
//
// The library comes from -lib or $DUCKDB_LIB; examples/duckdb/ci.sh fetches
// it from npm (@duckdb/node-bindings-linux-x64). Without SQL the program
// ingests a small Go table, "cities", and queries it. With -device the
// result goes through the default device (CDEVICE_DEVICE picks one) and back
// before it is printed.
//
// Exit status: 0 on success, 1 on an error, 2 on bad usage, 3 when libduckdb
// cannot be loaded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/loader"
	"github.com/purearrow/cdevice/stream"
)

const (
	exitError  = 1
	exitUsage  = 2
	exitNoLib  = 3
	defaultSQL = "SELECT name, population, population / 1e6 AS millions FROM cities ORDER BY population DESC"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("duckdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	libPath := fs.String("lib", "", "libduckdb's path (default: $"+EnvLib+")")
	onDevice := fs.Bool("device", false, "take the result through the default device")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: duckdb [-lib PATH] [-device] [SQL]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	lib, err := LoadLib(*libPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoLib
	}
	if err := runSQL(lib, fs.Arg(0), *onDevice, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	return 0
}

func runSQL(lib *Lib, sql string, onDevice bool, stdout, stderr io.Writer) error {
	db, err := Open(lib)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintf(stderr, "DuckDB %s (%s)\n", lib.Version, lib.Path)
	if sql == "" {
		sql = defaultSQL
		in := cities()
		err := db.Ingest("cities", in)
		in.Release()
		if err != nil {
			return err
		}
	}
	rows, err := db.Query(sql)
	if err != nil {
		return err
	}
	defer rows.Release()
	if !onDevice {
		return printRecords(stdout, rows.Schema(), rows.All())
	}
	dev, why, err := loader.Default(context.Background())
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "device: %s (%s)\n", dev.Name(), why)
	ds := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(ds)
	if err := stream.ExportReaderToDevice(context.Background(), rows, dev, ds); err != nil {
		return err
	}
	dr, err := stream.ImportDeviceStream(ds)
	if err != nil {
		return err
	}
	defer dr.Release()
	return printRecords(stdout, dr.Schema(), dr.HostRecords(context.Background()))
}

// printRecords prints a table: the schema's header, then every batch of
// recs.
func printRecords(w io.Writer, sc *arrow.Schema, recs iter.Seq2[arrow.RecordBatch, error]) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header(tw, sc)
	for rec, err := range recs {
		if err != nil {
			return err
		}
		body(tw, rec)
	}
	return tw.Flush()
}

func header(w io.Writer, sc *arrow.Schema) {
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = fmt.Sprintf("%s (%s)", f.Name, f.Type)
	}
	fmt.Fprintln(w, strings.Join(names, "\t"))
}

func body(w io.Writer, rec arrow.RecordBatch) {
	for i := range int(rec.NumRows()) {
		vals := make([]string, rec.NumCols())
		for c := range vals {
			vals[c] = rec.Column(c).ValueStr(i)
		}
		fmt.Fprintln(w, strings.Join(vals, "\t"))
	}
}

// cities is the demo table: a Go record batch.
func cities() array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "population", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"Tokyo", "Delhi", "Shanghai", "São Paulo", "Cairo"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{37468000, 28514000, 25582000, 21650000, 20076000}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	r, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return r
}
