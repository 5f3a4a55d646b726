package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
)

// PostgreSQL: the scan reads n rows of (bigint, double precision, text,
// timestamp) from a table that generate_series filled once (it stays in
// the server between runs: bench_scan_N), every iteration; the ingest
// appends 1M rows from Go memory to an empty table made before each
// iteration, outside the timer.
//
//	adbc    drivermgr + libadbc_driver_postgresql.so (COPY binary, batches
//	        of the driver's 16 MB hint)
//	adbc-4MB the same with adbc.postgresql.batch_size_hint_bytes = 4 MiB:
//	        its memory follows the batch size
//	pgx     pgx v5: rows.Scan into int64, float64, string, time.Time, then
//	        arrow-go builders, batches of BENCH_BATCH rows
//	pgx-raw pgx v5: rows.RawValues, the binary wire format decoded by hand
//	        into the builders (no Scan, no per-row allocation): the best a
//	        pure-Go client does
func BenchmarkPostgresScan(b *testing.B) {
	uri := postgresURI(b)
	n := rowsOr(b, pgScanRows)
	table := pgScanTable(b, uri, n)
	query := "SELECT id, x, s, ts FROM " + table
	b.Run("adbc", func(b *testing.B) {
		d := openADBC(b, map[string]string{"driver": sharedDriver(b, "libadbc_driver_postgresql.so"), "uri": uri})
		defer d.Close()
		benchScan(b, n, d.scan(query, nil))
	})
	b.Run("adbc-4MB", func(b *testing.B) {
		d := openADBC(b, map[string]string{"driver": sharedDriver(b, "libadbc_driver_postgresql.so"), "uri": uri})
		defer d.Close()
		benchScan(b, n, d.scan(query, map[string]string{"adbc.postgresql.batch_size_hint_bytes": "4194304"}))
	})
	b.Run("pgx", func(b *testing.B) {
		conn, batch := pgxConnect(b, uri), batchRows(b)
		benchScan(b, n, func(mon *memMonitor) (scanStats, error) {
			return pgxScan(context.Background(), conn, query, batch, false, mon, nil)
		})
	})
	b.Run("pgx-raw", func(b *testing.B) {
		conn, batch := pgxConnect(b, uri), batchRows(b)
		benchScan(b, n, func(mon *memMonitor) (scanStats, error) {
			return pgxScan(context.Background(), conn, query, batch, true, mon, nil)
		})
	})
}

func BenchmarkPostgresIngest(b *testing.B) {
	uri := postgresURI(b)
	n := rowsOr(b, ingestRows)
	recs := ingestBatches(n, clientBatchRows)
	defer releaseAll(recs)
	const table = "bench_ingest"
	conn := pgxConnect(b, uri)
	ctx := context.Background()
	recreate := func() error {
		for _, q := range []string{
			"DROP TABLE IF EXISTS " + table,
			"CREATE TABLE " + table + " (id bigint, x double precision, s text, ts timestamp)",
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}
	count := func() (n int64, err error) {
		err = conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		return n, err
	}
	b.Run("adbc", func(b *testing.B) {
		d := openADBC(b, map[string]string{"driver": sharedDriver(b, "libadbc_driver_postgresql.so"), "uri": uri})
		defer d.Close()
		benchIngest(b, n, recreate, func() error { return d.ingest(table, scanSchema, recs) }, count)
	})
	b.Run("pgx-copy", func(b *testing.B) {
		benchIngest(b, n, recreate, func() error {
			_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "x", "s", "ts"}, newArrowRows(recs))
			return err
		}, count)
	})
}

var pgTables sync.Map // uri+n -> table name made in this process

// pgScanTable makes (once per server: it stays) the scan's table of n rows.
func pgScanTable(tb testing.TB, uri string, n int) string {
	table := fmt.Sprintf("bench_scan_%d", n)
	if _, ok := pgTables.Load(uri + table); ok {
		return table
	}
	conn := pgxConnect(tb, uri)
	ctx := context.Background()
	var got int64
	err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&got)
	if err != nil || got != int64(n) {
		for _, q := range []string{
			"DROP TABLE IF EXISTS " + table,
			fmt.Sprintf(`CREATE TABLE %s AS SELECT i::bigint AS id, i * 0.5::double precision AS x,
				'row-' || i AS s, timestamp '2020-01-01' + i * interval '1 second' AS ts
				FROM generate_series(0, %d) AS i`, table, n-1),
			"VACUUM ANALYZE " + table,
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				tb.Fatalf("%s: %v", q, err)
			}
		}
	}
	pgTables.Store(uri+table, true)
	return table
}

func pgxConnect(tb testing.TB, uri string) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), uri)
	if err != nil {
		tb.Fatalf("pgx: %v", err)
	}
	tb.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// pgxScan reads the query's (bigint, double, text, timestamp) rows into
// Arrow batches of batch rows with arrow-go's builders; each batch goes to
// keep (when not nil, which then owns it) or is released.
func pgxScan(ctx context.Context, conn *pgx.Conn, query string, batch int, raw bool, mon *memMonitor, keep func(arrow.RecordBatch)) (scanStats, error) {
	var s scanStats
	start := time.Now()
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, scanSchema)
	defer bld.Release()
	bld.Reserve(batch)
	id := bld.Field(0).(*array.Int64Builder)
	x := bld.Field(1).(*array.Float64Builder)
	str := bld.Field(2).(*array.StringBuilder)
	ts := bld.Field(3).(*array.TimestampBuilder)
	emit := func() {
		s.emit(bld, start, mon, keep)
		bld.Reserve(batch)
	}
	if raw {
		for i, f := range rows.FieldDescriptions() {
			if i != 2 && f.Format != pgx.BinaryFormatCode {
				return s, fmt.Errorf("column %s arrives in text format", f.Name)
			}
		}
		for rows.Next() {
			v := rows.RawValues()
			id.Append(int64(binary.BigEndian.Uint64(v[0])))
			x.Append(math.Float64frombits(binary.BigEndian.Uint64(v[1])))
			str.BinaryBuilder.Append(v[2])
			// PostgreSQL's timestamps count microseconds from 2000-01-01.
			ts.Append(arrow.Timestamp(int64(binary.BigEndian.Uint64(v[3])) + pgEpochMicros))
			if id.Len() == batch {
				emit()
			}
		}
	} else {
		var (
			vid int64
			vx  float64
			vs  string
			vts time.Time
		)
		for rows.Next() {
			if err := rows.Scan(&vid, &vx, &vs, &vts); err != nil {
				return s, err
			}
			id.Append(vid)
			x.Append(vx)
			str.Append(vs)
			ts.Append(arrow.Timestamp(vts.UnixMicro()))
			if id.Len() == batch {
				emit()
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	if id.Len() > 0 {
		emit()
	}
	return s, nil
}

// pgEpochMicros is 2000-01-01 in microseconds since 1970-01-01.
const pgEpochMicros = 946_684_800_000_000

// arrowRows is a pgx.CopyFromSource over Arrow batches of scanSchema.
type arrowRows struct {
	recs []arrow.RecordBatch
	ri   int // the batch
	i    int // the row in it
	id   *array.Int64
	x    *array.Float64
	s    *array.String
	ts   *array.Timestamp
	vals []any
}

func newArrowRows(recs []arrow.RecordBatch) *arrowRows {
	return &arrowRows{recs: recs, ri: -1, vals: make([]any, 4)}
}

func (r *arrowRows) Next() bool {
	r.i++
	for r.ri < 0 || r.i >= int(r.recs[r.ri].NumRows()) {
		r.ri++
		if r.ri >= len(r.recs) {
			return false
		}
		rec := r.recs[r.ri]
		r.id = rec.Column(0).(*array.Int64)
		r.x = rec.Column(1).(*array.Float64)
		r.s = rec.Column(2).(*array.String)
		r.ts = rec.Column(3).(*array.Timestamp)
		r.i = 0
	}
	return true
}

func (r *arrowRows) Values() ([]any, error) {
	r.vals[0] = r.id.Value(r.i)
	r.vals[1] = r.x.Value(r.i)
	r.vals[2] = r.s.Value(r.i)
	r.vals[3] = time.UnixMicro(int64(r.ts.Value(r.i))).UTC()
	return r.vals, nil
}

func (r *arrowRows) Err() error { return nil }
