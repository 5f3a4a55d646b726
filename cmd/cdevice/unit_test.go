package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
)

// A failing round trip is retried column by column, and the report names
// the column at fault and says what to do.
func TestFailureNamesTheColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec, err := sample.Batch(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	batches := []arrow.RecordBatch{rec}

	// A round trip that loses dense unions.
	broken := func(_ context.Context, _ device.Device, want []arrow.RecordBatch) error {
		for _, f := range want[0].Schema().Fields() {
			if f.Type.ID() == arrow.DENSE_UNION {
				return errors.New("dense union lost")
			}
		}
		return nil
	}
	cols := failingColumns(context.Background(), io.Discard, broken, device.CPU, batches)
	var names []string
	for _, c := range cols {
		names = append(names, c.Column)
		if !strings.HasPrefix(c.Type, "dense_union<") || c.Error != "dense union lost" {
			t.Errorf("column %+v", c)
		}
	}
	if !slices.Equal(names, []string{"dense_union", "sliced_dense_union"}) {
		t.Errorf("failing columns %v", names)
	}

	// A panic is a failure, not a crash.
	var stderr bytes.Buffer
	err = guarded(context.Background(), &stderr, func(context.Context, device.Device, []arrow.RecordBatch) error { panic("boom") }, device.CPU, batches)
	if err == nil || !strings.Contains(err.Error(), "panic: boom") || !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("err %v, stderr %q", err, stderr.String())
	}

	rep := &selftestReport{Devices: []string{"cpu"}, Checks: []checkResult{
		{Device: "cpu", Interface: "ArrowDeviceArray", Import: "C path", Pass: true},
		{Device: "cpu", Interface: "ArrowAsyncDeviceStream", Import: "C path", Error: "batch 0: dense union lost", FailingColumns: cols},
	}, Passed: 1, Failed: 1}
	rep.Leaks.Pass = true
	var out bytes.Buffer
	printSelftest(&out, rep)
	for _, want := range []string{"FAIL", "cpu ArrowAsyncDeviceStream (C path): batch 0: dense union lost",
		"column dense_union (dense_union<", "selftest FAILED: 1 of 2 checks failed", "--device", "cdevice selftest --json"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// sameBatch names the columns whose values differ.
func TestSameBatchNamesDifferences(t *testing.T) {
	mem := memory.NewGoAllocator()
	want, err := sample.Batch(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	cols := want.Columns()
	i := want.Schema().FieldIndices("int32")[0]
	other, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1, 2, 3, 4, 5, 6, 7, 8]`))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	changed := slices.Clone(cols)
	changed[i] = other
	got := array.NewRecordBatch(want.Schema(), changed, want.NumRows())
	defer got.Release()
	if err := sameBatch(want, want, true); err != nil {
		t.Errorf("a batch differs from itself: %v", err)
	}
	err = sameBatch(want, got, true)
	if err == nil || !strings.Contains(err.Error(), "values differ in 1 columns: int32: got [1 2 3") {
		t.Errorf("err %v", err)
	}
}

// On a terminal the progress is a bar redrawn in place and cleared at the
// end; elsewhere it is plain lines on stderr.
func TestProgress(t *testing.T) {
	var term, plain bytes.Buffer
	p := newProgress(&term, &plain, true, 2)
	p.start("one")
	p.done("one", true, time.Millisecond)
	p.start("two")
	p.done("two", false, time.Millisecond)
	p.finish()
	one, two := "\r[                        ] 1/2 one", "\r[============            ] 2/2 two"
	clear := "\r" + strings.Repeat(" ", len(two)-1) + "\r"
	if s := term.String(); s != one+two+clear || plain.Len() != 0 {
		t.Errorf("terminal %q, plain %q", s, plain.String())
	}

	term.Reset()
	p = newProgress(&term, &plain, false, 2)
	p.start("one")
	p.done("one", true, time.Millisecond)
	p.start("two")
	p.done("two", false, 2*time.Millisecond)
	p.finish()
	if want := "[1/2] one: pass (1ms)\n[2/2] two: FAIL (2ms)\n"; plain.String() != want || term.Len() != 0 {
		t.Errorf("plain %q, want %q; terminal %q", plain.String(), want, term.String())
	}
	if isTerminal(&term) {
		t.Error("a buffer is not a terminal")
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		json bool
		pos  []string
	}{
		{[]string{"f.arrow", "--json"}, true, []string{"f.arrow"}},
		{[]string{"--json", "f.arrow"}, true, []string{"f.arrow"}},
		{[]string{"a", "b"}, false, []string{"a", "b"}},
		{[]string{"--", "--json"}, false, []string{"--json"}},
		{[]string{"a", "--", "-b"}, false, []string{"a", "-b"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		j := fs.Bool("json", false, "")
		pos, _, ok := parseFlags(fs, c.args)
		if !ok || *j != c.json || !slices.Equal(pos, c.pos) {
			t.Errorf("%q: ok %v json %v positional %q", c.args, ok, *j, pos)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, code, ok := parseFlags(fs, []string{"-h"}); ok || code != 0 {
		t.Errorf("-h: ok %v code %d", ok, code)
	}
	if _, code, ok := parseFlags(fs, []string{"x", "--nope"}); ok || code != 2 {
		t.Errorf("--nope: ok %v code %d", ok, code)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "64KiB": 64 << 10, "256MiB": 256 << 20, "1GiB": 1 << 30, "2m": 2 << 20, "8": 8, "16 MB": 16 << 20} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "4", "-1", "lots", "1.5GiB", "99999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q: accepted as %d", in, b)
		}
	}
}

// A --size the machine cannot hold three times over (or past what bench
// takes anywhere) is a usage error naming the limit, not a crash: 2^62
// bytes panicked in make, 1000 GiB ended the process out of memory (the
// limit here is at most 1 TiB: where the memory is known, far less).
func TestBenchSizeBeyondMemory(t *testing.T) {
	limit, why := benchSizeLimit()
	t.Logf("limit %d bytes: %s", limit, why)
	if limit <= 0 || limit > maxBenchSize {
		t.Fatalf("limit %d", limit)
	}
	for _, size := range []string{"4611686018427387904", strconv.FormatInt(limit+8, 10)} {
		var stdout, stderr bytes.Buffer
		if code := bench([]string{"--device", "cpu", "--size", size}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "three times") {
			t.Errorf("--size %s: exit %d, %q; want a usage error naming the limit", size, code, stderr.String())
		}
	}
}

// corruptingDevice is CPU memory presented as a device the host cannot read
// directly (ext_dev:id) whose copies back to the host of the sizes that
// corrupt says come back with their last byte flipped: a broken device,
// which the selftest must catch.
type corruptingDevice struct {
	device.Device
	id      int64
	corrupt func(size int) bool
}

// The library keys its memory cache by device, so a device must be
// comparable: hence pointer receivers.
func (*corruptingDevice) Type() abi.DeviceType { return abi.DeviceExtDev }
func (d *corruptingDevice) ID() int64          { return d.id }
func (*corruptingDevice) Name() string         { return "corrupting ext_dev" }
func (*corruptingDevice) HostAccessible() bool { return false }

func (d *corruptingDevice) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if err := d.Device.CopyToHost(dst, src, off, s); err != nil {
		return err
	}
	if d.corrupt(len(dst)) {
		dst[len(dst)-1] ^= 0xff
	}
	return nil
}

// Every interface notices a device that corrupts data, whether the damage
// breaks the structure (caught by validation) or only changes values
// (caught by the comparison), and nothing panics or leaks on the way.
func TestSelftestCatchesCorruption(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec, err := sample.Batch(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	// Two columns whose values alone are 64 bytes long.
	i, f := rec.Schema().FieldIndices("int64")[0], rec.Schema().FieldIndices("float64")[0]
	two := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{rec.Schema().Field(i), rec.Schema().Field(f)}, nil),
		[]arrow.Array{rec.Column(i), rec.Column(f)}, rec.NumRows())
	defer two.Release()
	for _, c := range []struct {
		dev  *corruptingDevice
		rec  arrow.RecordBatch
		want string
	}{
		{&corruptingDevice{device.CPU, 7, func(n int) bool { return n > 0 }}, rec, "invalid input"},
		{&corruptingDevice{device.CPU, 8, func(n int) bool { return n == 64 }}, two, "values differ in 2 columns: int64: got"},
	} {
		device.Register(c.dev)
		for _, ip := range importPaths {
			old := identity.Set(ip.identity)
			for _, itf := range selftestInterfaces {
				var stderr bytes.Buffer
				err := guarded(context.Background(), &stderr, itf.run, c.dev, []arrow.RecordBatch{c.rec})
				if err == nil || !strings.Contains(err.Error(), c.want) || stderr.Len() > 0 {
					t.Errorf("ext_dev:%d %s (%s): err %.300v, want %q; stderr %s", c.dev.id, itf.name, ip.name, err, c.want, stderr.String())
				}
				// And passes on the CPU, which copies faithfully.
				if err := guarded(context.Background(), io.Discard, itf.run, device.CPU, []arrow.RecordBatch{c.rec}); err != nil {
					t.Errorf("%s (%s) on the CPU: %v", itf.name, ip.name, err)
				}
			}
			identity.Set(old)
		}
	}
	if l := cdevice.LiveLeaks(); !l.Zero() {
		t.Errorf("leaks: %v", l)
	}
}
