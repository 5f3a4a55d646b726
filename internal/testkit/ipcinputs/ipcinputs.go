// Package ipcinputs builds, at test time, Arrow IPC inputs that once cost
// a reader hours or gigabytes (nothing of them is checked in): each must
// be refused with an error naming its limit, after work bounded by its
// size.
package ipcinputs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/internal/ipcverify"
)

// An Input is one such input and a phrase its error must hold.
type Input struct {
	Name string
	Data []byte
	Want string
}

// ZerosRows is the rows of ZerosBatch: its string offsets are 64 MiB of
// zeros, which ZSTD compresses to about 2 KiB.
const ZerosRows = 16 << 20

var zeros struct {
	once sync.Once
	rec  arrow.RecordBatch
}

// ZerosBatch is a batch of ZerosRows empty strings.
func ZerosBatch() arrow.RecordBatch {
	zeros.once.Do(func() {
		b := array.NewStringBuilder(memory.NewGoAllocator())
		defer b.Release()
		b.Reserve(ZerosRows)
		for range ZerosRows {
			b.Append("")
		}
		col := b.NewArray()
		defer col.Release()
		sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
		zeros.rec = array.NewRecordBatch(sc, []arrow.Array{col}, ZerosRows)
	})
	return zeros.rec
}

// IPCBytes writes recs as an IPC file (file) or stream with opts.
func IPCBytes(t testing.TB, file bool, recs []arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append(opts, ipc.WithSchema(recs[0].Schema()))
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if file {
		fw, err := ipc.NewFileWriter(&buf, opts...)
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	} else {
		w = ipc.NewWriter(&buf, opts...)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// SameBlock makes every block of the IPC file data's footer list its first
// block: one small batch read as often as the footer lists it.
func SameBlock(t testing.TB, data []byte) []byte {
	t.Helper()
	data = slices.Clone(data)
	n := int64(binary.LittleEndian.Uint32(data[len(data)-10:]))
	footer := data[int64(len(data))-10-n : len(data)-10]
	start, count, err := ipcverify.FooterBlocks(footer)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i < count; i++ {
		copy(footer[start+24*i:start+24*i+24], footer[start:start+24])
	}
	return data
}

// WithFrame replaces the compressed bytes of the first compressed buffer of
// the first batch of the IPC stream data with frame, padded by frame to
// the buffer's length, keeping everything else as it is.
func WithFrame(t testing.TB, data []byte, frame func(n int) []byte) []byte {
	t.Helper()
	data = slices.Clone(data)
	msgs, err := ipcverify.StreamMessages(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		for i := 0; i < len(m.Buffers); i += 2 {
			if off, n := m.Buffers[i], m.Buffers[i+1]; n > 8 {
				copy(data[m.Body+off+8:m.Body+off+n], frame(int(n-8)))
				return data
			}
		}
	}
	t.Fatal("no compressed batch")
	return nil
}

// ZSTDWindowFrame is a ZSTD frame of n bytes whose header asks for a 512
// MiB window, then one raw block: what an attacker needs to make a decoder
// reserve the window.
func ZSTDWindowFrame(n int) []byte {
	f := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x98} // magic; no content size, not single segment; window 2^29
	raw := n - len(f) - 3
	hdr := uint32(raw)<<3 | 1 // the last block, raw
	return append(append(f, byte(hdr), byte(hdr>>8), byte(hdr>>16)), make([]byte, raw)...)
}

// Inputs builds the inputs.
func Inputs(t testing.TB) []Input {
	t.Helper()
	rec, ints := ZerosBatch(), CompressedInts(t)
	defer ints.Release()
	row := rec.NewSlice(0, 1)
	defer row.Release()
	empty := ints.NewSlice(0, 0)
	defer empty.Release()
	// 100 blocks: the 64 MiB batch, then one of its rows 99 times.
	listed := IPCBytes(t, true, append([]arrow.RecordBatch{rec}, slices.Repeat([]arrow.RecordBatch{row}, 99)...), ipc.WithZstd())
	return []Input{
		{"the same 64 MiB ZSTD batch listed 100 times in a file's footer", SameBlock(t, listed), "must be in order"},
		{"a file of 8 distinct 64 MiB ZSTD batches", IPCBytes(t, true, slices.Repeat([]arrow.RecordBatch{rec}, 8), ipc.WithZstd()), "--max-data"},
		{"a stream of 40 64 MiB ZSTD batches", IPCBytes(t, false, slices.Repeat([]arrow.RecordBatch{rec}, 40), ipc.WithZstd()), "--max-data"},
		{"a ZSTD frame asking for a 512 MiB window", WithFrame(t, IPCBytes(t, false, []arrow.RecordBatch{ints}, ipc.WithZstd()), ZSTDWindowFrame),
			"ZSTD window of 536870912 bytes"},
		{"a stream of 20000 empty batches, --max-batches 1000", IPCBytes(t, false, slices.Repeat([]arrow.RecordBatch{empty}, 20000)), "--max-batches"},
	}
}

// DictionaryBatches is n one-row batches of a dictionary column that all
// share one dictionary of 65,536 strings (4 MiB).
func DictionaryBatches(t testing.TB, n int) []arrow.RecordBatch {
	t.Helper()
	sb := array.NewStringBuilder(memory.NewGoAllocator())
	defer sb.Release()
	for i := range 1 << 16 {
		sb.Append(fmt.Sprintf("%064d", i))
	}
	dict := sb.NewArray()
	defer dict.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	ib := array.NewInt32Builder(memory.NewGoAllocator())
	defer ib.Release()
	ib.Append(0)
	idx := ib.NewArray()
	defer idx.Release()
	col := array.NewDictionaryArray(dt, idx, dict)
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 1)
	t.Cleanup(rec.Release)
	return slices.Repeat([]arrow.RecordBatch{rec}, n)
}

// CompressedInts is a small batch of int64s.
func CompressedInts(t testing.TB) arrow.RecordBatch {
	t.Helper()
	b := array.NewInt64Builder(memory.NewGoAllocator())
	defer b.Release()
	for i := range 4096 {
		b.Append(int64(i % 7))
	}
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{col}, int64(col.Len()))
}
