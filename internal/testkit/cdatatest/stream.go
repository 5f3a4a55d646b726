package cdatatest

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

const wantMessage = "Expected error message"

// releaseReader releases an imported reader where it can be released (both
// implementations' readers can; arrio.Reader does not say so).
func releaseReader(r arrio.Reader) {
	if rel, ok := r.(interface{ Release() }); ok {
		rel.Release()
	}
}

// readAll reads r to its end, passing each batch to f before releasing it.
func readAll(r arrio.Reader, f func(i int, rec arrow.RecordBatch)) (int, error) {
	for i := 0; ; i++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return i, nil
		}
		if err != nil {
			return i, err
		}
		f(i, rec)
		rec.Release()
	}
}

// failingReader is a RecordReader that fails after ops calls of Schema and
// Next: Schema returns nil, Next false, and Err an error.
type failingReader struct {
	ops int
	rec arrow.RecordBatch
}

func (r *failingReader) Retain()  {}
func (r *failingReader) Release() {}

func (r *failingReader) Schema() *arrow.Schema {
	r.ops--
	if r.ops == 0 {
		return nil
	}
	return r.rec.Schema()
}

func (r *failingReader) Next() bool {
	r.ops--
	return r.ops > 0
}

func (r *failingReader) RecordBatch() arrow.RecordBatch {
	r.rec.Retain()
	return r.rec
}

func (r *failingReader) Record() arrow.RecordBatch { return r.RecordBatch() }

func (r *failingReader) Err() error {
	if r.ops == 0 {
		//lint:ignore ST1005 the message arrow-go's suite expects, verbatim
		return errors.New(wantMessage)
	}
	return nil
}

// exportBatches exports a reader of recs (released when the test ends) into
// a stream struct in C memory.
func (s *suite) exportBatches(t *testing.T, recs []arrow.RecordBatch) *abi.ArrayStream {
	t.Helper()
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	noError(t, "NewRecordReader", err)
	t.Cleanup(rdr.Release)
	out := testsupport.OffHeap[abi.ArrayStream](t)
	s.api.ExportRecordReader(rdr, addr(out))
	return out
}

var streamScenarios = []scenario{
	{"RecordReaderStream", func(t *testing.T, s *suite) {
		tk := s.p.token(t)
		st := testsupport.OffHeap[abi.ArrayStream](t)
		s.p.call(t, "cc_stream_batches", addr(st), tk.addr, 2)
		rdr := s.api.ImportCArrayStream(addr(st), nil)
		if !st.Released() {
			t.Errorf("the import did not move the stream out of its struct")
		}
		n, err := readAll(rdr, func(i int, rec arrow.RecordBatch) {
			if rec.NumCols() != 2 || rec.ColumnName(0) != "a" || rec.ColumnName(1) != "b" {
				t.Fatalf("batch %d: columns %v, want a and b", i, rec.Schema())
			}
			ints, strs := rec.Column(0).(*array.Int32), rec.Column(1).(*array.String)
			for j := 0; j < int(rec.NumRows()); j++ {
				if want := int32((j + 1) * (i + 1)); ints.Value(j) != want {
					t.Errorf("batch %d: a[%d] = %d, want %d", i, j, ints.Value(j), want)
				}
			}
			for j, want := range []string{"foo", "bar", "baz"} {
				if strs.Value(j) != want {
					t.Errorf("batch %d: b[%d] = %q, want %q", i, j, strs.Value(j), want)
				}
			}
		})
		noError(t, "Read", err)
		if n != 2 {
			t.Errorf("%d batches, want 2", n)
		}
		releaseReader(rdr)
		runtime.GC()
		// The stream, its schema (3 nodes) and 2 batches of 3 nodes each.
		wantSettled(t, tk, 0, 1+3+2*3, true)
	}},
	{"ExportRecordReaderStream", func(t *testing.T, s *suite) {
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		out := s.exportBatches(t, recs)
		if out.GetSchema == 0 || out.GetNext == 0 || out.GetLastError == 0 || out.Release == 0 || out.PrivateData == 0 {
			t.Fatalf("exported stream %+v has a null member", *out)
		}
		imported := s.api.ImportCArrayStream(addr(out), nil)
		defer releaseReader(imported)
		n, err := readAll(imported, func(i int, rec arrow.RecordBatch) {
			if i >= len(recs) || !array.RecordEqual(recs[i], rec) {
				t.Errorf("batch %d: got %v", i, rec)
			}
		})
		noError(t, "Read", err)
		if n != len(recs) {
			t.Errorf("%d batches, want %d", n, len(recs))
		}
	}},
	{"ExportRecordReaderStreamLifetime", func(t *testing.T, s *suite) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(t, 0)
		schema := arrow.NewSchema([]arrow.Field{{Name: "strings", Type: arrow.BinaryTypes.String}}, nil)
		bld := array.NewBuilder(mem, arrow.BinaryTypes.String)
		arr := bld.NewArray()
		bld.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{arr}, 0)
		arr.Release()
		rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		rec.Release()
		noError(t, "NewRecordReader", err)

		out := testsupport.OffHeap[abi.ArrayStream](t)
		s.api.ExportRecordReader(rdr, addr(out))
		rdr.Release() // from here on only the stream holds the reader
		if mem.CurrentAlloc() == 0 {
			t.Errorf("the exported stream holds no memory")
		}
		s.api.ReleaseCArrowArrayStream(addr(out))
		if !out.Released() {
			t.Errorf("the stream is not released")
		}
	}},
	{"RecordReaderExport", func(t *testing.T, s *suite) {
		// A C consumer reads the whole exported stream and releases it.
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		out := s.exportBatches(t, recs)
		if n := int(s.p.call(t, "cc_consume_stream", addr(out))); n != len(recs) {
			t.Errorf("the C consumer read %d batches (negative: an error code), want %d", n, len(recs))
		}
		if !out.Released() {
			t.Errorf("the stream is not released after C released it")
			s.p.call(t, "cc_release_stream", addr(out))
		}
	}},
	{"RecordReaderError", func(t *testing.T, s *suite) {
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		for ops := 1; ops <= 3; ops++ {
			t.Run(fmt.Sprint(ops), func(t *testing.T) {
				out := testsupport.OffHeap[abi.ArrayStream](t)
				s.api.ExportRecordReader(&failingReader{ops: ops, rec: recs[0]}, addr(out))
				rdr, err := s.api.ImportCRecordReader(addr(out), nil)
				if err == nil {
					_, err = readAll(rdr, func(int, arrow.RecordBatch) {})
					releaseReader(rdr)
				}
				if !out.Released() {
					s.api.ReleaseCArrowArrayStream(addr(out))
				}
				wantErrorContaining(t, "a round trip of a failing reader", err, wantMessage)
				runtime.GC()
			})
		}
	}},
	{"RecordReaderImportError", func(t *testing.T, s *suite) {
		// A C stream whose get_schema fails.
		t.Run("ImportCArrayStream", func(t *testing.T) {
			tk := s.p.token(t)
			st := testsupport.OffHeap[abi.ArrayStream](t)
			s.p.call(t, "cc_stream_failing", addr(st), tk.addr)
			var rdr arrio.Reader
			r := catch(func() { rdr = s.api.ImportCArrayStream(addr(st), nil) })
			switch {
			case r != nil && s.api.Robust:
				t.Fatalf("ImportCArrayStream panicked: %v", r)
			case r != nil:
				// arrow-go's documented behaviour (Deprecated: it panics).
				wantErrorContaining(t, "ImportCArrayStream's panic", fmt.Errorf("%v", r), wantMessage)
				return
			}
			_, err := rdr.Read()
			wantErrorContaining(t, "Read", err, wantMessage)
			releaseReader(rdr)
			if !st.Released() {
				s.api.ReleaseCArrowArrayStream(addr(st))
			}
			wantSettled(t, tk, 0, 1, true)
		})
		t.Run("ImportCRecordReader", func(t *testing.T) {
			tk := s.p.token(t)
			st := testsupport.OffHeap[abi.ArrayStream](t)
			s.p.call(t, "cc_stream_failing", addr(st), tk.addr)
			rdr, err := s.api.ImportCRecordReader(addr(st), nil)
			if err == nil {
				releaseReader(rdr)
			}
			wantErrorContaining(t, "ImportCRecordReader", err, wantMessage)
			if !st.Released() {
				s.api.ReleaseCArrowArrayStream(addr(st))
			}
			wantSettled(t, tk, 0, 1, true)
		})
	}},
	{"ConfuseGoGc", func(t *testing.T, s *suite) {
		// C leaves what look like Go heap pointers in the output structs
		// before each call; 32 goroutines export and consume streams while
		// the collector runs.
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		concurrency, rounds := 32, 256
		if testing.Short() {
			rounds = 16
		}
		outs := make([]*abi.ArrayStream, concurrency)
		for i := range outs {
			outs[i] = testsupport.OffHeap[abi.ArrayStream](t)
		}
		s.p.fn(t, "cc_release_stream") // look the symbols up here, not in the goroutines
		s.p.fn(t, "cc_consume_stream_confusing")
		var wg sync.WaitGroup
		for g := range concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := outs[g]
				for range rounds {
					rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
					if err != nil {
						t.Error(err)
						return
					}
					runtime.GC()
					*out = abi.ArrayStream{}
					s.api.ExportRecordReader(rdr, addr(out))
					if n := int(s.p.call(t, "cc_consume_stream_confusing", addr(out), uintptr(rand.Int32()))); n != len(recs) {
						t.Errorf("the C consumer read %d batches (negative: an error code), want %d", n, len(recs))
						s.p.call(t, "cc_release_stream", addr(out))
					}
					rdr.Release()
					runtime.GC()
				}
			}()
		}
		wg.Wait()
	}},
}
