package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice/internal/ipcverify"
	"github.com/purearrow/cdevice/internal/testkit/ipcinputs"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// corruptCases are the gold cases whose files TestInspectCorruptFiles
// damages: every kind of metadata (nesting, dictionaries and their deltas,
// views with variadic buffers, unions, run ends, custom metadata).
var corruptCases = []string{
	"generated_primitive", "generated_nested", "generated_recursive_nested",
	"generated_dictionary", "generated_nested_dictionary", "generated_binary_view",
	"generated_list_view", "generated_union", "generated_map",
	"generated_run_end_encoded", "generated_custom_metadata", "generated_decimal256",
}

// heapAllocs is the bytes the Go heap has handed out so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// inspectChecked runs inspect on path in this process, as the command does,
// and fails t unless it ends with exit 0 and a report, or exit 1 and one
// message naming the file; a panic fails t with its stack. It returns the
// exit status and the bytes allocated meanwhile, which are bounded: the
// file's memory limit, plus what inspect needs besides the batches.
func inspectChecked(t testing.TB, path, what string) int {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := -1
	testsupport.NoPanic(t, what+": inspect", func() { code = inspect([]string{path}, &stdout, &stderr) })
	switch {
	case code == exitOK && strings.Contains(stdout.String(), "ArrowSchema tree") && stderr.Len() == 0:
	case code == exitFail && stdout.Len() == 0 && strings.HasPrefix(stderr.String(), "cdevice inspect: "+path) &&
		strings.Count(stderr.String(), "\n") == 1:
	default:
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, code, stdout.String(), stderr.String())
	}
	return code
}

// Gold files with 1 to 8 bytes changed, thousands of them from a seeded
// PRNG: inspect reports each as a file, or as an error naming the file (and
// the batch or message), never a panic, and never allocates more than the
// file's memory limit. A SIGSEGV or an out-of-memory death cannot be
// recovered: they end this test binary, which fails just the same.
func TestInspectCorruptFiles(t *testing.T) {
	const perFile = 250
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	var codes [2]int
	var worst uint64
	for _, c := range corruptCases {
		for _, ext := range []string{".stream", ".arrow_file"} {
			gold, err := os.ReadFile(filepath.Join(testsupport.GoldDir(t), c+ext))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c+ext)
			for i := range perFile {
				b := slices.Clone(gold)
				var changed []string
				for range 1 + rng.IntN(8) {
					pos, v := rng.IntN(len(b)), byte(rng.UintN(256))
					b[pos] = v
					changed = append(changed, fmt.Sprintf("%d=%#02x", pos, v))
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s%s mutation %d (%s)", c, ext, i, strings.Join(changed, " "))
				before := heapAllocs()
				codes[inspectChecked(t, path, what)]++
				allocated := heapAllocs() - before
				worst = max(worst, allocated)
				if limit := uint64(ipcverify.DefaultMemory(int64(len(b)))) + 16<<20; allocated > limit {
					t.Fatalf("%s: allocated %d bytes, more than the limit and 16 MiB (%d)", what, allocated, limit)
				}
			}
		}
	}
	t.Logf("%d read cleanly, %d refused; at most %.1f MiB allocated by one run", codes[exitOK], codes[exitFail], float64(worst)/(1<<20))
	if codes[exitOK] == 0 || codes[exitFail] == 0 {
		t.Errorf("exit statuses %v: the mutations should hit both data and metadata", codes)
	}
}

// FuzzInspect is TestInspectCorruptFiles for go test -fuzz, seeded with
// gold files in both forms.
func FuzzInspect(f *testing.F) {
	for _, name := range []string{"generated_primitive.stream", "generated_nested.arrow_file", "generated_dictionary.stream",
		"generated_binary_view.arrow_file", "generated_union.stream", "generated_run_end_encoded.arrow_file"} {
		b, err := os.ReadFile(filepath.Join(testsupport.GoldDir(f), name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "input")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inspectChecked(t, path, "input")
	})
}

// compressedStream writes a stream of one LZ4-compressed batch of an int64
// column and returns it with the offset of its body, whose first 8 bytes
// are the column's uncompressed length.
func compressedStream(t *testing.T) ([]byte, int) {
	t.Helper()
	rec := ipcinputs.CompressedInts(t)
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithLZ4())
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	msgs, err := ipcverify.StreamMessages(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("%d messages, %v; want the schema and a batch", len(msgs), err)
	}
	body := msgs[1].Body
	if got := int64(binary.LittleEndian.Uint64(data[body:])); got != 8*4096 {
		t.Fatalf("the body starts with %d, want the uncompressed length %d", got, 8*4096)
	}
	return data, int(body)
}

// A compressed buffer that claims 1 GiB (from a file of a few KiB), or more
// than --max-memory, is refused before anything is allocated for it; a
// legitimate one is read.
func TestInspectMemoryLimit(t *testing.T) {
	data, body := compressedStream(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.arrows")
	if err := os.WriteFile(good, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := inspectChecked(t, good, "compressed stream"); code != exitOK {
		t.Fatalf("a compressed stream: exit %d", code)
	}
	var stdout, stderr bytes.Buffer
	if code := inspect([]string{"--max-memory", "16KiB", good}, &stdout, &stderr); code != exitFail ||
		!strings.Contains(stderr.String(), "memory limit exceeded") || !strings.Contains(stderr.String(), "--max-memory") {
		t.Errorf("--max-memory 16KiB: exit %d, %s", code, stderr.String())
	}

	huge := filepath.Join(dir, "huge.arrows")
	bad := slices.Clone(data)
	binary.LittleEndian.PutUint64(bad[body:], 1<<30) // 1 GiB: an int on 32-bit targets too
	if err := os.WriteFile(huge, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	before := heapAllocs()
	stderr.Reset()
	if code := inspect([]string{huge}, &stdout, &stderr); code != exitFail ||
		!strings.Contains(stderr.String(), "huge.arrows: message 1: memory limit exceeded: buffer 1 decompresses to 1073741824 bytes") {
		t.Errorf("1 GiB claimed: exit %d, %s", code, stderr.String())
	}
	if allocated := heapAllocs() - before; allocated > 16<<20 {
		t.Errorf("refusing 1 GiB allocated %d bytes", allocated)
	}
}

// A corrupt field name cannot write to the terminal through an error.
func TestPrintable(t *testing.T) {
	if got, want := printable("name \"a\nb\x1b[31m\xff\" ✓ ü"), `name "a\nb\x1b[31m\xff" ✓ ü`; got != want {
		t.Errorf("printable = %s, want %s", got, want)
	}
}
