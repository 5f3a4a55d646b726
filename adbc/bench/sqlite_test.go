package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "modernc.org/sqlite"
)

// SQLite (a file in a temporary directory): the scan reads n rows of
// (INTEGER, REAL, TEXT, TEXT: the timestamp, as SQLite keeps it) that a
// recursive CTE wrote once per process; the ingest appends 1M rows from Go
// memory to an empty table (a file per side: two SQLite libraries in one
// process must not share a file's POSIX locks) made before each
// iteration, outside the timer.
//
//	adbc        drivermgr + libadbc_driver_sqlite.so (system libsqlite3),
//	            batches of the driver's default 1024 rows
//	adbc-64k    the same with adbc.sqlite.query.batch_rows = 65536
//	modernc     modernc.org/sqlite (pure Go) through database/sql:
//	            rows.Scan into int64, float64, string, string, then arrow-go
//	            builders, batches of BENCH_BATCH rows
//	modernc-raw the same scanning the texts into sql.RawBytes (no per-row
//	            string allocation)
func BenchmarkSQLiteScan(b *testing.B) {
	drv := sharedDriver(b, "libadbc_driver_sqlite.so")
	n := rowsOr(b, sqliteScanRows)
	path := sqliteScanFile(b, n)
	for _, v := range []struct {
		name string
		opts map[string]string
	}{
		{"adbc", nil},
		{"adbc-64k", map[string]string{"adbc.sqlite.query.batch_rows": "65536"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			d := openADBC(b, map[string]string{"driver": drv, "uri": "file:" + path + "?mode=ro"})
			defer d.Close()
			benchScan(b, n, d.scan(sqliteScanQuery, v.opts))
		})
	}
	for _, raw := range []bool{false, true} {
		name := "modernc"
		if raw {
			name = "modernc-raw"
		}
		b.Run(name, func(b *testing.B) {
			db := moderncOpen(b, "file:"+path+"?mode=ro")
			batch := batchRows(b)
			benchScan(b, n, func(mon *memMonitor) (scanStats, error) {
				return moderncScan(context.Background(), db, batch, raw, mon, nil)
			})
		})
	}
}

func BenchmarkSQLiteIngest(b *testing.B) {
	drv := sharedDriver(b, "libadbc_driver_sqlite.so")
	n := rowsOr(b, ingestRows)
	recs := sqliteIngestBatches(n, clientBatchRows)
	defer releaseAll(recs)
	dir := b.TempDir()
	b.Run("adbc", func(b *testing.B) {
		d := openADBC(b, map[string]string{"driver": drv, "uri": "file:" + filepath.Join(dir, "adbc.db")})
		defer d.Close()
		benchIngest(b, n, d.recreate(b, "bench_ingest", sqliteIngestDDL),
			func() error { return d.ingest("bench_ingest", sqliteSchema, recs) }, d.count(b, "bench_ingest"))
	})
	b.Run("modernc", func(b *testing.B) {
		db := moderncOpen(b, "file:"+filepath.Join(dir, "modernc.db"))
		ctx := context.Background()
		recreate := func() error {
			for _, q := range []string{"DROP TABLE IF EXISTS bench_ingest", sqliteIngestDDL} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		}
		count := func() (n int64, err error) {
			err = db.QueryRowContext(ctx, "SELECT count(*) FROM bench_ingest").Scan(&n)
			return n, err
		}
		benchIngest(b, n, recreate, func() error { return moderncInsert(ctx, db, recs) }, count)
	})
}

const (
	sqliteScanQuery = "SELECT id, x, s, ts FROM bench_scan"
	sqliteIngestDDL = "CREATE TABLE bench_ingest (id INTEGER, x REAL, s TEXT, ts TEXT)"
)

// sqliteSchema is scanSchema as SQLite has it: the timestamp is text
// (ISO 8601, as SQLite's date functions write it).
var sqliteSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// sqliteIngestBatches are ingestBatches with the timestamp as SQLite's
// text.
func sqliteIngestBatches(n, batch int) []arrow.RecordBatch {
	src := ingestBatches(n, batch)
	defer releaseAll(src)
	out := make([]arrow.RecordBatch, 0, len(src))
	for _, rec := range src {
		ts := rec.Column(3).(*array.Timestamp)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := 0; i < ts.Len(); i++ {
			sb.Append(time.UnixMicro(int64(ts.Value(i))).UTC().Format(time.DateTime))
		}
		col := sb.NewArray()
		sb.Release()
		out = append(out, array.NewRecordBatch(sqliteSchema, []arrow.Array{rec.Column(0), rec.Column(1), rec.Column(2), col}, rec.NumRows()))
		col.Release()
	}
	return out
}

var sqliteFiles sync.Map // n -> path

// sqliteScanFile is the path of a database file whose bench_scan holds n
// rows, made once per process (and removed at its end).
func sqliteScanFile(tb testing.TB, n int) string {
	if p, ok := sqliteFiles.Load(n); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "cdevice-adbc-bench-")
	if err != nil {
		tb.Fatal(err)
	}
	atExit(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "scan.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE bench_scan (id INTEGER, x REAL, s TEXT, ts TEXT)",
		fmt.Sprintf(`INSERT INTO bench_scan WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
			SELECT i, i * 0.5, 'row-' || i, datetime('2020-01-01', '+' || i || ' seconds') FROM c`, n-1),
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	sqliteFiles.Store(n, path)
	return path
}

func moderncOpen(tb testing.TB, dsn string) *sql.DB {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// moderncScan reads bench_scan into Arrow batches of batch rows of
// sqliteSchema with arrow-go's builders; each batch goes to keep (when not
// nil, which then owns it) or is released.
func moderncScan(ctx context.Context, db *sql.DB, batch int, raw bool, mon *memMonitor, keep func(arrow.RecordBatch)) (scanStats, error) {
	var s scanStats
	start := time.Now()
	rows, err := db.QueryContext(ctx, sqliteScanQuery)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sqliteSchema)
	defer bld.Release()
	bld.Reserve(batch)
	id := bld.Field(0).(*array.Int64Builder)
	x := bld.Field(1).(*array.Float64Builder)
	str := bld.Field(2).(*array.StringBuilder)
	ts := bld.Field(3).(*array.StringBuilder)
	var (
		vid      int64
		vx       float64
		vs, vts  string
		rs, rts  sql.RawBytes
		dst      = []any{&vid, &vx, &vs, &vts}
		rawDst   = []any{&vid, &vx, &rs, &rts}
		scanDest = dst
	)
	if raw {
		scanDest = rawDst
	}
	for rows.Next() {
		if err := rows.Scan(scanDest...); err != nil {
			return s, err
		}
		id.Append(vid)
		x.Append(vx)
		if raw {
			str.BinaryBuilder.Append(rs)
			ts.BinaryBuilder.Append(rts)
		} else {
			str.Append(vs)
			ts.Append(vts)
		}
		if id.Len() == batch {
			s.emit(bld, start, mon, keep)
			bld.Reserve(batch)
		}
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	if id.Len() > 0 {
		s.emit(bld, start, mon, keep)
	}
	return s, nil
}

// moderncInsert writes recs into bench_ingest: one transaction, one
// prepared INSERT run per row.
func moderncInsert(ctx context.Context, db *sql.DB, recs []arrow.RecordBatch) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	st, err := tx.PrepareContext(ctx, "INSERT INTO bench_ingest (id, x, s, ts) VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer st.Close()
	for _, rec := range recs {
		id := rec.Column(0).(*array.Int64)
		x := rec.Column(1).(*array.Float64)
		s := rec.Column(2).(*array.String)
		ts := rec.Column(3).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			if _, err := st.ExecContext(ctx, id.Value(i), x.Value(i), s.Value(i), ts.Value(i)); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
