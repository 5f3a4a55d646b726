package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// Small inputs that once cost inspect hours or gigabytes, built here at
// test time (not checked in): each must now be refused with an error that
// names its limit, after work bounded by its size.

// A hostileInput is one such file and a phrase its error must hold.
type hostileInput struct {
	name string
	data []byte
	want string
}

// zerosRows is the rows of zerosBatch: its string offsets are 64 MiB of
// zeros, which ZSTD compresses to about 2 KiB.
const zerosRows = 16 << 20

var zeros struct {
	once sync.Once
	rec  arrow.RecordBatch
}

// zerosBatch is a batch of zerosRows empty strings.
func zerosBatch() arrow.RecordBatch {
	zeros.once.Do(func() {
		b := array.NewStringBuilder(memory.NewGoAllocator())
		defer b.Release()
		b.Reserve(zerosRows)
		for range zerosRows {
			b.Append("")
		}
		col := b.NewArray()
		defer col.Release()
		sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
		zeros.rec = array.NewRecordBatch(sc, []arrow.Array{col}, zerosRows)
	})
	return zeros.rec
}

// ipcBytes writes recs as an IPC file (file) or stream with opts.
func ipcBytes(t testing.TB, file bool, recs []arrow.RecordBatch, opts ...ipc.Option) []byte {
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

// sameBlock makes every block of the IPC file data's footer list its first
// block: one small batch read as often as the footer lists it.
func sameBlock(t testing.TB, data []byte) []byte {
	t.Helper()
	data = slices.Clone(data)
	n := int64(binary.LittleEndian.Uint32(data[len(data)-10:]))
	footer := data[int64(len(data))-10-n : len(data)-10]
	f := newFBBuf(footer)
	pos, err := f.root(footerFB)
	if err != nil {
		t.Fatal(err)
	}
	start, count := f.vectorAt(pos, 3)
	for i := int64(1); i < count; i++ {
		copy(footer[start+24*i:start+24*i+24], footer[start:start+24])
	}
	return data
}

// withFrame replaces the compressed bytes of the first compressed buffer of
// the first batch of the IPC stream data with frame, padded by frame to
// the buffer's length, keeping everything else as it is.
func withFrame(t testing.TB, data []byte, frame func(n int) []byte) []byte {
	t.Helper()
	data = slices.Clone(data)
	r := bytes.NewReader(data)
	var vc *viewCounts
	for pos := int64(0); ; {
		bodyLen, next, bb, err := checkStreamMessage(r, int64(len(data)), pos, &vc)
		if err != nil || next < 0 {
			t.Fatalf("no compressed batch (%v)", err)
		}
		for i := 0; bb != nil && i < len(bb.buffers); i += 2 {
			if off, n := bb.buffers[i], bb.buffers[i+1]; n > 8 {
				copy(data[next+off+8:next+off+n], frame(int(n-8)))
				return data
			}
		}
		pos = next + bodyLen
	}
}

// zstdWindowFrame is a ZSTD frame of n bytes whose header asks for a 512
// MiB window, then one raw block: what an attacker needs to make a decoder
// reserve the window.
func zstdWindowFrame(n int) []byte {
	f := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x98} // magic; no content size, not single segment; window 2^29
	raw := n - len(f) - 3
	hdr := uint32(raw)<<3 | 1 // the last block, raw
	return append(append(f, byte(hdr), byte(hdr>>8), byte(hdr>>16)), make([]byte, raw)...)
}

// hostileInputs builds the inputs.
func hostileInputs(t testing.TB) []hostileInput {
	t.Helper()
	rec, ints := zerosBatch(), compressedInts(t)
	defer ints.Release()
	row := rec.NewSlice(0, 1)
	defer row.Release()
	empty := ints.NewSlice(0, 0)
	defer empty.Release()
	// 100 blocks: the 64 MiB batch, then one of its rows 99 times.
	listed := ipcBytes(t, true, append([]arrow.RecordBatch{rec}, slices.Repeat([]arrow.RecordBatch{row}, 99)...), ipc.WithZstd())
	return []hostileInput{
		{"the same 64 MiB ZSTD batch listed 100 times in a file's footer", sameBlock(t, listed), "must be in order"},
		{"a file of 8 distinct 64 MiB ZSTD batches", ipcBytes(t, true, slices.Repeat([]arrow.RecordBatch{rec}, 8), ipc.WithZstd()), "--max-data"},
		{"a stream of 40 64 MiB ZSTD batches", ipcBytes(t, false, slices.Repeat([]arrow.RecordBatch{rec}, 40), ipc.WithZstd()), "--max-data"},
		{"a ZSTD frame asking for a 512 MiB window", withFrame(t, ipcBytes(t, false, []arrow.RecordBatch{ints}, ipc.WithZstd()), zstdWindowFrame),
			"ZSTD window of 536870912 bytes"},
		{"a stream of 20000 empty batches, --max-batches 1000", ipcBytes(t, false, slices.Repeat([]arrow.RecordBatch{empty}, 20000)), "--max-batches"},
	}
}

// dictionaryBatches is n one-row batches of a dictionary column that all
// share one dictionary of 65,536 strings (4 MiB).
func dictionaryBatches(t testing.TB, n int) []arrow.RecordBatch {
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

// compressedInts is a small batch of int64s.
func compressedInts(t testing.TB) arrow.RecordBatch {
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

// Each hostile input, given to cdevice inspect in a child process whose
// address space is limited, is refused with an error naming its limit,
// well within a deadline and with a peak resident memory under the limit
// it reads with plus 64 MiB (the figures: BenchmarkHostileInputs).
func TestHostileInputsBounded(t *testing.T) {
	dir := t.TempDir()
	for _, h := range hostileInputs(t) {
		t.Run(h.name, func(t *testing.T) {
			path := filepath.Join(dir, "input")
			if err := os.WriteFile(path, h.data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"inspect", path}
			if strings.Contains(h.name, "--max-batches") {
				args = []string{"inspect", "--max-batches", "1000", path}
			}
			limit := defaultMemoryLimit(int64(len(h.data)))
			cmd := selfexec.Command([]string{mainEnv + "=1"}, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			peak, elapsed, err := selfexec.Bounded(cmd, limit+256<<20, time.Minute)
			t.Logf("%d bytes: %v, peak RSS %.1f MiB (limit %.1f MiB): %s", len(h.data), elapsed.Round(time.Millisecond),
				float64(peak)/(1<<20), float64(limit)/(1<<20), strings.TrimSpace(stderr.String()))
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitFail || !strings.Contains(stderr.String(), h.want) {
				t.Errorf("%v; want exit 1 saying %q", err, h.want)
			}
			if peak > limit+64<<20 {
				t.Errorf("peak RSS %d bytes, more than the limit and 64 MiB (%d)", peak, limit+64<<20)
			}
		})
	}
}

// BenchmarkHostileInputs times inspect refusing each hostile input, in this
// process (the target: under 2 s for any input under 1 MB).
func BenchmarkHostileInputs(b *testing.B) {
	dir := b.TempDir()
	for _, h := range hostileInputs(b) {
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			path := filepath.Join(dir, "input")
			if err := os.WriteFile(path, h.data, 0o644); err != nil {
				b.Fatal(err)
			}
			args := []string{path}
			if strings.Contains(h.name, "--max-batches") {
				args = []string{"--max-batches", "1000", path}
			}
			for b.Loop() {
				if inspect(args, new(bytes.Buffer), new(bytes.Buffer)) != exitFail {
					b.Fatal("accepted")
				}
			}
		})
	}
}
