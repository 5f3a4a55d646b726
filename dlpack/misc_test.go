package dlpack_test

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/dlpack"
)

// TestFlags: zero-copy exports are read-only unless WithWritable; copies
// are flagged as copies and writable.
func TestFlags(t *testing.T) {
	da := onDevice(t, fromBytes(t, arrow.PrimitiveTypes.Int32, 8, valueBytes(dtI32, 0, 8)), cpuDev)
	for _, c := range []struct {
		opts []dlpack.ExportOption
		want uint64
	}{
		{nil, dlpack.FlagReadOnly},
		{[]dlpack.ExportOption{dlpack.WithWritable()}, 0},
	} {
		mt, err := dlpack.Export(context.Background(), da, c.opts...)
		must(t, err)
		if mt.Flags != c.want {
			t.Errorf("flags %#x, want %#x", mt.Flags, c.want)
		}
		mt.Delete()
	}
	lt, err := dlpack.ExportLegacy(context.Background(), da)
	must(t, err)
	before := stats()
	lt.Delete()
	if s := stats(); s.Exports != before.Exports-1 || s.DeleterCalls != before.DeleterCalls+1 {
		t.Fatalf("legacy Delete: %+v, before %+v", s, before)
	}
	var nilTensor *dlpack.ManagedTensor
	nilTensor.Delete() // nothing to do
}

// TestConcurrent: exports, imports and deleter calls from many goroutines
// (run with -race), Go's deleter called directly and by C.
func TestConcurrent(t *testing.T) {
	c := loadC(t)
	vals := valueBytes(dtF64, 0, 1000)
	a := fromBytes(t, arrow.PrimitiveTypes.Float64, 1000, vals)
	da := onDevice(t, a, cpuDev)
	before := stats()
	var wg sync.WaitGroup
	const workers, rounds = 8, 200
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				mt, err := dlpack.Export(context.Background(), da)
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					c.del(mt.Addr(), 1) // the deleter through C
					continue
				}
				back, err := dlpack.Import(context.Background(), mt)
				if err != nil {
					t.Error(err)
					return
				}
				back.Retain()
				back.Release()
				back.Release()
			}
		}()
	}
	wg.Wait()
	s := stats()
	if s.Exports != before.Exports || s.Imports != before.Imports || s.DeleterCalls != before.DeleterCalls+workers*rounds ||
		s.StrayDeletes != before.StrayDeletes {
		t.Fatalf("%+v, before %+v", s, before)
	}
	h, err := da.ToHost(context.Background())
	must(t, err)
	defer h.Release()
	wantEqual(t, h, a)
}
