package main

import (
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
)

// duckdbHeldSchemas counts the schemas DuckDB took from get_schema in
// duckdb_arrow_scan and never released (TestArrowScanLiveLeaks): the leak
// check at the end subtracts them, and only them.
var duckdbHeldSchemas int64

func TestMain(m *testing.M) {
	code := m.Run()
	l := cdevice.LiveLeaks()
	l.ExportedSchemas -= duckdbHeldSchemas
	l.Handles -= int(duckdbHeldSchemas)
	if code == 0 && !l.Zero() {
		fmt.Fprintf(os.Stderr, "live objects at exit (besides %d schemas duckdb_arrow_scan holds): %+v\n", duckdbHeldSchemas, l)
		code = 1
	}
	os.Exit(code)
}

// needLib loads the library $DUCKDB_LIB names, or skips the test when it
// is not set (CI sets it: examples/duckdb/ci.sh).
func needLib(t testing.TB) *Lib {
	t.Helper()
	if os.Getenv(EnvLib) == "" {
		t.Skipf("$%s is not set: these tests need libduckdb (examples/duckdb/ci.sh fetches it and runs them)", EnvLib)
	}
	lib, err := LoadLib("")
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func openDB(t testing.TB, lib *Lib) *DB {
	t.Helper()
	db, err := Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

func exec(t testing.TB, db *DB, sql string) {
	t.Helper()
	if err := db.Exec(sql); err != nil {
		t.Fatal(err)
	}
}

// queryRow runs sql, which returns one row, and returns its values as
// strings.
func queryRow(t testing.TB, db *DB, sql string) []string {
	t.Helper()
	r, err := db.Query(sql)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := collect(t, r)
	defer releaseAll(recs)
	var out []string
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			for _, c := range rec.Columns() {
				out = append(out, strings.Clone(c.ValueStr(i))) // ValueStr aliases DuckDB's buffer
			}
		}
	}
	return out
}

// collect reads every batch of r (retained) and releases r.
func collect(t testing.TB, r array.RecordReader) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	defer r.Release()
	var recs []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return r.Schema(), recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// Settings modes: what DuckDB's Arrow export produces for the same table.
var modes = []struct {
	name string
	set  []string
}{
	{"default", nil},
	{"views", []string{"SET produce_arrow_string_view = true", "SET arrow_output_list_view = true"}},
	{"large", []string{"SET arrow_large_buffer_size = true"}},
	{"lossless", []string{"SET arrow_lossless_conversion = true"}},
}

// TestTypes makes a table of every case's column (typeRows rows, nulls),
// then checks DuckDB → Go (DuckDB's aggregates against Go's over the
// imported arrays) and Go → DuckDB (the imported batches ingested back
// through stream.ExportReader and ADBC, DuckDB's aggregates over that
// table against the first ones), in each of DuckDB's export modes.
func TestTypes(t *testing.T) {
	lib := needLib(t)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			db := openDB(t, lib)
			for _, s := range mode.set {
				exec(t, db, s)
			}
			exec(t, db, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
			exec(t, db, typeSQL("t"))
			want := queryRow(t, db, aggSQL("t", typeCases))

			// DuckDB → Go.
			rows, err := db.Query("SELECT * FROM t")
			if err != nil {
				t.Fatal(err)
			}
			sc, recs := collect(t, rows)
			defer releaseAll(recs)
			got := make([][]*big.Int, len(typeCases))
			var n int64
			for _, rec := range recs {
				n += rec.NumRows()
				for j, c := range typeCases {
					col := rec.Column(j + 1)
					v := c.goAg(t, col)
					if got[j] == nil {
						got[j] = v
						continue
					}
					for k := range v {
						got[j][k].Add(got[j][k], v[k])
					}
				}
			}
			if n != typeRows {
				t.Fatalf("read %d rows, want %d", n, typeRows)
			}
			compare(t, "DuckDB→Go", sc, want, got)

			// Go → DuckDB: the batches back in, dictionaries decoded.
			var back []arrow.RecordBatch
			for _, rec := range recs {
				back = append(back, decodeDictionaries(t, rec))
			}
			defer releaseAll(back)
			in, err := array.NewRecordReader(back[0].Schema(), back)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Ingest("back", in)
			in.Release()
			if err != nil {
				t.Fatal(err)
			}
			again := queryRow(t, db, aggSQL("back", typeCases))
			for i := range want {
				if again[i] != want[i] {
					t.Errorf("Go→DuckDB: aggregate %d: DuckDB over the ingested table %s, over the original %s", i, again[i], want[i])
				}
			}
		})
	}
}

// compare checks Go's aggregates against DuckDB's (flattened, in case
// order), naming the type each case arrived as.
func compare(t *testing.T, what string, sc *arrow.Schema, want []string, got [][]*big.Int) {
	t.Helper()
	i := 0
	for j, c := range typeCases {
		typ := sc.Field(j + 1).Type
		for k, ag := range c.aggs {
			w, ok := new(big.Int).SetString(strings.TrimSpace(want[i]), 10)
			if !ok {
				t.Errorf("%s %s (%s): DuckDB's %s = %q is not an integer", what, c.name, typ, ag, want[i])
			} else if got[j][k].Cmp(w) != 0 {
				t.Errorf("%s %s (%s): %s: DuckDB %s, Go %s", what, c.name, typ, ag, w, got[j][k])
			}
			i++
		}
	}
	t.Logf("%s: %d aggregates over %d types agree", what, i, len(typeCases))
}
