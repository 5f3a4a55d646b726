package ipcverify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

func TestLimitedAllocator(t *testing.T) {
	a := newLimitedAllocator(memory.NewGoAllocator(), 100, 1000)
	b := a.Allocate(60)
	b = a.Reallocate(80, b)
	refused := func(f func()) (err error) {
		defer func() { err, _ = recover().(error) }()
		f()
		return nil
	}
	if err := refused(func() { a.Allocate(21) }); !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "an allocation of 21 bytes with 80 held would pass the limit of 100 bytes") {
		t.Errorf("Allocate past the limit: %v", err)
	}
	first := a.Err()
	a.Free(b)
	c := a.Allocate(100) // freed memory counts no more
	if err := refused(func() { a.Allocate(-1) }); err == nil || a.Err() != first {
		t.Errorf("Allocate(-1): %v; Err %v, want the first refusal %v", err, a.Err(), first)
	}
	a.Free(c)
	if a.used != 0 {
		t.Errorf("%d bytes held after everything was freed", a.used)
	}
	// What was handed out counts toward the total even once freed.
	for range 8 {
		a.Free(a.Allocate(100))
	}
	if err := refused(func() { a.Allocate(100) }); !errors.Is(err, ErrDataLimit) || !strings.Contains(err.Error(), "past 1000 bytes in all (--max-data)") {
		t.Errorf("Allocate past the total: %v", err)
	}
}

// arrow-go sizes a slice by a view array's variadic buffer count: a count
// of 2^40 in an otherwise sound stream is refused, not allocated.
func TestVariadicCount(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testsupport.GoldDir(t), "generated_binary_view.stream"))
	if err != nil {
		t.Fatal(err)
	}
	var vc *viewCounts
	_, next, _, err := checkStreamMessage(bytes.NewReader(data), int64(len(data)), 0, &vc) // the schema
	if err != nil {
		t.Fatal(err)
	}
	meta := next + 8 // after the continuation marker and the length
	f := newFBBuf(data[meta:])
	root, err := f.root(messageFB)
	if err != nil {
		t.Fatal(err)
	}
	counts, n := f.vectorAt(f.tableAt(root, 2), 4)
	if n == 0 {
		t.Fatal("the first batch has no variadic buffer counts")
	}
	binary.LittleEndian.PutUint64(data[meta+counts:], 1<<40)
	_, err = Read(bytes.NewReader(data), int64(len(data)), Limits{}, func(arrow.RecordBatch) error { return nil })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(fmt.Sprint(err), "message 1: corrupt Arrow IPC metadata: variadic buffer count 1099511627776") {
		t.Errorf("%v; want the variadic count refused", err)
	}
}

// Columns whose buffers are one region of a body (overlapping buffers, as a
// crafted file's metadata may point them) are charged at each reference:
// 20,000 columns over one 1 MiB buffer are 20 GB of work for a 1 MiB body,
// refused by --max-data before anything is validated (5.5 MB took 36 s).
func TestChargesOverlappingBuffers(t *testing.T) {
	data := memory.NewBufferBytes(make([]byte, 1<<20))
	cols := make([]arrow.Array, 20_000)
	fields := make([]arrow.Field, len(cols))
	for i := range cols {
		d := array.NewData(arrow.PrimitiveTypes.Int64, 1<<17, []*memory.Buffer{nil, data}, nil, 0, 0)
		cols[i] = array.NewInt64Data(d)
		d.Release()
		defer cols[i].Release()
		fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: arrow.PrimitiveTypes.Int64}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1<<17)
	defer rec.Release()
	lim := budget{Limits: Limits{Data: DefaultData(1 << 20)}}
	if err := lim.spendWork(batchWork(rec, map[arrow.ArrayData]bool{}), "the batch"); !errors.Is(err, ErrDataLimit) {
		t.Errorf("%d bytes of work for a 1 MiB body: %v, want ErrDataLimit", batchWork(rec, nil), err)
	}
}
