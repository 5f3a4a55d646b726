package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

type config struct {
	driver, uri, entrypoint, profile, out, query string
	limit                                        int
	progress                                     bool
	opts                                         options
}

// run opens the database, runs the query and prints or writes its result
// as it streams in.
func (c *config) run(ctx context.Context, stdout, stderr io.Writer) error {
	opts := map[string]string{}
	for k, v := range c.opts {
		opts[k] = v
	}
	for k, v := range map[string]string{"driver": c.driver, "uri": c.uri, "entrypoint": c.entrypoint, "profile": c.profile} {
		if v != "" {
			opts[k] = v
		}
	}
	db, err := drivermgr.Driver{}.NewDatabaseWithContext(ctx, opts)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Open(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := conn.NewStatement()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetSqlQuery(c.query); err != nil {
		return err
	}
	start := time.Now()
	rdr, affected, err := st.ExecuteQuery(ctx)
	if err != nil {
		return err
	}
	defer rdr.Release()
	var sink batchSink
	if c.out != "" {
		sink, err = newFileSink(c.out, rdr.Schema())
	} else {
		sink = newTableSink(stdout, rdr.Schema(), c.limit)
	}
	if err != nil {
		return err
	}
	p := progress{w: stderr, on: c.progress, start: start}
	var rows int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += rec.NumRows()
		if err := sink.write(rec); err != nil {
			sink.abort()
			return err
		}
		p.update(rows)
	}
	p.done()
	if err := rdr.Err(); err != nil {
		// Cancelled or failed midway: what was read is shown, and nothing
		// says the result was complete (no count of rows).
		sink.abort()
		return err
	}
	if err := sink.close(); err != nil {
		return err
	}
	summary := fmt.Sprintf("%d rows in %s", rows, time.Since(start).Round(time.Millisecond))
	if rows == 0 && affected > 0 {
		summary = fmt.Sprintf("%d rows affected in %s", affected, time.Since(start).Round(time.Millisecond))
	}
	if c.out != "" {
		summary += ", written to " + c.out
	}
	fmt.Fprintln(stderr, summary)
	return nil
}

// A batchSink takes the batches of the result in order; close ends a
// complete result, abort one that failed midway.
type batchSink interface {
	write(arrow.RecordBatch) error
	close() error
	abort()
}

// tableSink prints the first limit rows as an aligned table, then how many
// more there were.
type tableSink struct {
	w      io.Writer
	tw     *tabwriter.Writer
	limit  int
	shown  int
	hidden int64
}

func newTableSink(w io.Writer, sc *arrow.Schema, limit int) *tableSink {
	t := &tableSink{w: w, tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), limit: limit}
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	fmt.Fprintln(t.tw, strings.Join(names, "\t"))
	return t
}

func (t *tableSink) write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	for i := range n {
		if t.limit > 0 && t.shown >= t.limit {
			t.hidden += int64(n - i)
			return nil
		}
		cells := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			cells[j] = cell(col, i)
		}
		fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
		t.shown++
	}
	return nil
}

// cell renders one value on one line: NULL, or arrow-go's rendering with
// tabs and newlines escaped.
func cell(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "NULL"
	}
	s := col.ValueStr(i)
	return strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// abort prints the rows shown so far, and no count of those not shown.
func (t *tableSink) abort() { t.tw.Flush() }

func (t *tableSink) close() error {
	err := t.tw.Flush()
	if t.hidden > 0 {
		fmt.Fprintf(t.w, "... %d more rows (--limit 0 prints all)\n", t.hidden)
	}
	return err
}

// fileSink writes Arrow IPC: the file format for .arrow and .feather, the
// stream format otherwise.
type fileSink struct {
	f *os.File
	w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
}

func newFileSink(path string, sc *arrow.Schema) (*fileSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s := &fileSink{f: f}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".arrow", ".feather":
		s.w, err = ipc.NewFileWriter(f, ipc.WithSchema(sc))
	default:
		s.w = ipc.NewWriter(f, ipc.WithSchema(sc))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *fileSink) write(rec arrow.RecordBatch) error { return s.w.Write(rec) }

// abort removes the file: a result cut short is no result.
func (s *fileSink) abort() {
	s.close()
	os.Remove(s.f.Name())
}

func (s *fileSink) close() error {
	err := s.w.Close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// progress redraws one line on stderr at most every 200ms.
type progress struct {
	w     io.Writer
	on    bool
	start time.Time
	last  time.Time
	drawn bool
}

func (p *progress) update(rows int64) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%d rows, %.0f rows/s ", rows, float64(rows)/max(el, 1e-9))
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
