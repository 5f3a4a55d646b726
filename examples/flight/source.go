package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/stream"
)

// ErrBadTicket is returned for a ticket that names no stream.
var ErrBadTicket = errors.New("flight example: bad ticket")

// maxGenBytes bounds what a gen ticket may ask for (16 GiB in all).
const maxGenBytes = 16 << 30

// readArrowFile reads every batch of an Arrow IPC file (or stream).
func readArrowFile(path string) (*arrow.Schema, []arrow.RecordBatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fr, err := ipc.NewFileReader(f); err == nil {
		defer fr.Close()
		recs := make([]arrow.RecordBatch, 0, fr.NumRecords())
		for i := 0; i < fr.NumRecords(); i++ {
			rb, err := fr.RecordBatch(i)
			if err != nil {
				releaseAll(recs)
				return nil, nil, fmt.Errorf("%s: batch %d: %w", path, i, err)
			}
			rb.Retain()
			recs = append(recs, rb)
		}
		return fr.Schema(), recs, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	sr, err := ipc.NewReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not an Arrow IPC file or stream: %w", path, err)
	}
	defer sr.Release()
	var recs []arrow.RecordBatch
	for sr.Next() {
		rb := sr.RecordBatch()
		rb.Retain()
		recs = append(recs, rb)
	}
	if err := sr.Err(); err != nil {
		releaseAll(recs)
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return sr.Schema(), recs, nil
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, rb := range recs {
		rb.Release()
	}
}

// genBatch returns a batch of one non-null int64 column of about size bytes.
func genBatch(size int) arrow.RecordBatch {
	n := max(size/8, 1)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		b.UnsafeAppend(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{col}, int64(n))
}

// parseGen parses "gen:BATCHES:BYTES".
func parseGen(ticket string) (batches, size int, ok bool, err error) {
	rest, found := strings.CutPrefix(ticket, "gen:")
	if !found {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(rest, ":")
	if !found {
		return 0, 0, true, fmt.Errorf("%w: %q: want gen:BATCHES:BYTES", ErrBadTicket, ticket)
	}
	batches, err1 := strconv.Atoi(a)
	size, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || batches < 0 || size <= 0 || size > maxGenBytes || batches > maxGenBytes/size {
		return 0, 0, true, fmt.Errorf("%w: %q: want gen:BATCHES:BYTES, at most %d bytes in all", ErrBadTicket, ticket, maxGenBytes)
	}
	return batches, size, true, nil
}

// genBatches is n times the same generated batch of about size bytes.
func genBatches(n, size int) (*arrow.Schema, []arrow.RecordBatch) {
	rb := genBatch(size)
	defer rb.Release()
	recs := make([]arrow.RecordBatch, n)
	for i := range recs {
		rb.Retain()
		recs[i] = rb
	}
	return rb.Schema(), recs
}

// load returns the batches a ticket names: gen:BATCHES:BYTES (the same
// batch BATCHES times), or the name of an Arrow IPC file in dir.
func load(dir, ticket string) (*arrow.Schema, []arrow.RecordBatch, error) {
	n, size, ok, err := parseGen(ticket)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		sc, recs := genBatches(n, size)
		return sc, recs, nil
	}
	if dir == "" || ticket == "" || ticket != filepath.Base(ticket) || ticket == "." || ticket == ".." {
		return nil, nil, fmt.Errorf("%w: %q: want gen:BATCHES:BYTES or a file name in the served directory", ErrBadTicket, ticket)
	}
	return readArrowFile(filepath.Join(dir, ticket))
}

// exportBatches exports recs as an ArrowDeviceArrayStream on dev into out
// (exportLanded: on the CPU without copying, elsewhere copied). The stream
// holds a reference to each of recs until the consumer releases it (a
// get_next the consumer abandoned may still read them after the caller has
// released its own).
func exportBatches(ctx context.Context, sc *arrow.Schema, recs []arrow.RecordBatch, dev device.Device, out *abi.DeviceArrayStream) error {
	rdr, err := array.NewRecordReader(sc, recs)
	if err != nil {
		return err
	}
	defer rdr.Release()
	return exportLanded(ctx, rdr, dev, out)
}

// counts is what a consumer saw.
type counts struct {
	Batches, Rows int64
	Device        abi.DeviceType
}

// consumeCount is a consumer of a device stream as C sees one: it imports
// in, reads every batch where it lies (no copy to the host), counts rows,
// and releases everything.
func consumeCount(ctx context.Context, in *abi.DeviceArrayStream) (counts, error) {
	rdr, err := stream.ImportDeviceStream(in)
	if err != nil {
		return counts{}, err
	}
	defer rdr.Release()
	c := counts{Device: rdr.DeviceType()}
	for b, err := range rdr.All(ctx) {
		if err != nil {
			return c, err
		}
		c.Batches++
		c.Rows += b.Length
	}
	return c, nil
}
