package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/stream"
)

const benchUsage = `usage: cdevice bench [--device D] [--size BYTES] [--json]

Measure, on the CPU and every device 'cdevice devices' lists (or only the
one --device, else CDEVICE_DEVICE, names):

  copy bandwidth     host→device (CopyToDevice) and device→host (ToHost) of an
                     int64 array of --size bytes, median of 5 (it holds
                     three such arrays: --size is at most a third of the
                     memory available)
  export/import      ExportRecordBatch + ImportRecordBatch of a 16-column,
                     1024-row batch, µs per round trip, with identity imports
                     on (Go to Go shortcut) and off (the path C's structs take)
  stream rate        1000 such batches through an ArrowArrayStream (host), an
                     ArrowDeviceArrayStream and an async device stream (depth
                     8) per device, batches per second, median of 3

It takes a few seconds at the default size. Numbers are this process on this
machine: close other work for stable results.

Exit status: 0 on success, 1 when a measurement failed, 2 on a usage error.

flags:
`

const (
	benchCopyReps   = 5
	benchStreamReps = 3
	benchBatches    = 1000
	benchAsyncDepth = 8
	benchWideRows   = sample.WideRows
)

// byteSize is a flag.Value of bytes: 1048576, 64KiB, 256MiB, 1GiB (K, M, G
// and KB, MB, GB are binary too).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(strings.ToUpper(num), strings.ToUpper(u.suffix)) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult || n*mult < 8 {
		return fmt.Errorf("want a number of bytes ≥ 8, such as 1048576 or 256MiB")
	}
	*b = byteSize(n * mult)
	return nil
}

type copyResult struct {
	Device                string  `json:"device"`
	Bytes                 int64   `json:"bytes"`
	HostToDeviceNS        int64   `json:"host_to_device_ns"`
	DeviceToHostNS        int64   `json:"device_to_host_ns"`
	HostToDeviceBytesPerS float64 `json:"host_to_device_bytes_per_s"`
	DeviceToHostBytesPerS float64 `json:"device_to_host_bytes_per_s"`
}

type exportImportResult struct {
	Import         string  `json:"import"`
	Columns        int     `json:"columns"`
	Rows           int     `json:"rows"`
	USPerRoundTrip float64 `json:"us_per_round_trip"`
}

type streamResult struct {
	Interface     string  `json:"interface"`
	Device        string  `json:"device"`
	Import        string  `json:"import"`
	Batches       int     `json:"batches"`
	Depth         int     `json:"depth,omitempty"`
	BatchesPerSec float64 `json:"batches_per_s"`
}

type benchReport struct {
	SizeBytes    int64                `json:"size_bytes"`
	Devices      []string             `json:"devices"`
	Copy         []copyResult         `json:"copy"`
	ExportImport []exportImportResult `json:"export_import"`
	Streams      []streamResult       `json:"streams"`
	ElapsedNS    int64                `json:"elapsed_ns"` // 0 within one clock tick (since)
}

func bench(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", benchUsage, stderr)
	devSpec := fs.String("device", "", "measure only this device: cpu, opencl:0, cuda:0, hip:0, ... (default: $CDEVICE_DEVICE, else the CPU and every device found)")
	asJSON := fs.Bool("json", false, "print the numbers as JSON")
	size := byteSize(256 << 20)
	fs.Var(&size, "size", "bytes per copy in the bandwidth test: a number, or with KiB, MiB, GiB (default 256MiB)")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "bench", "unexpected argument %q (name a device with --device, a size with --size)", rest[0])
	}
	if limit, why := benchSizeLimit(); int64(size) > limit {
		return usageError(stderr, "bench", "--size %d is more than %d bytes (%s): the test holds the array about three times at once", int64(size), limit, why)
	}
	ctx := context.Background()
	devs, code, ok := pickDevices("bench", *devSpec, stderr)
	if !ok {
		return code
	}

	start := now()
	rep := benchReport{SizeBytes: int64(size) / 8 * 8}
	for _, d := range devs {
		rep.Devices = append(rep.Devices, spec(d))
	}
	steps := len(devs) + 2*len(importPaths) + 2*len(importPaths)*len(devs)
	prog := newProgress(stdout, stderr, !*asJSON && isTerminal(stdout), steps)
	prog.okWord = "done"
	oldIdentity := identity.Enabled()
	defer identity.Set(oldIdentity)
	fail := func(what string, err error) int {
		prog.finish()
		fmt.Fprintf(stderr, "cdevice bench: %s: %v\n", what, err)
		return exitFail
	}
	step := func(label string, f func() error) error {
		prog.start(label)
		t0 := now()
		err := f()
		prog.done(label, err == nil, since(t0))
		return err
	}

	for _, d := range devs {
		label := fmt.Sprintf("%s copy %s", spec(d), formatBytes(rep.SizeBytes))
		err := step(label, func() error {
			r, err := benchCopy(ctx, d, rep.SizeBytes)
			rep.Copy = append(rep.Copy, r)
			return err
		})
		cdevice.TrimMemoryCache() // give the copies' memory back before the next device
		if err != nil {
			return fail(label, err)
		}
	}

	rec := sample.WideBatch()
	defer rec.Release()
	for _, ip := range importPaths {
		label := fmt.Sprintf("export+import (%s)", ip.name)
		if err := step(label, func() error {
			identity.Set(ip.identity)
			us, err := benchExportImport(rec)
			rep.ExportImport = append(rep.ExportImport, exportImportResult{Import: ip.name, Columns: int(rec.NumCols()), Rows: int(rec.NumRows()), USPerRoundTrip: us})
			return err
		}); err != nil {
			return fail(label, err)
		}
	}

	type streamBench struct {
		name  string
		dev   device.Device // nil: host memory, no device
		depth int
		run   func(ctx context.Context, rec arrow.RecordBatch, dev device.Device) error
	}
	var benches []streamBench
	benches = append(benches, streamBench{name: "ArrowArrayStream", run: hostStreamOnce})
	for _, d := range devs {
		benches = append(benches,
			streamBench{name: "ArrowDeviceArrayStream", dev: d, run: deviceStreamOnce},
			streamBench{name: "ArrowAsyncDeviceStream", dev: d, depth: benchAsyncDepth, run: asyncOnce})
	}
	for _, b := range benches {
		where := "host"
		if b.dev != nil {
			where = spec(b.dev)
		}
		for _, ip := range importPaths {
			label := fmt.Sprintf("%s %s (%s)", where, b.name, ip.name)
			if err := step(label, func() error {
				identity.Set(ip.identity)
				per, err := medianPerCall(benchStreamReps, func() error {
					sctx, cancel := context.WithTimeout(ctx, time.Minute)
					defer cancel()
					return b.run(sctx, rec, b.dev)
				})
				if err != nil {
					return err
				}
				rep.Streams = append(rep.Streams, streamResult{Interface: b.name, Device: where, Import: ip.name, Batches: benchBatches,
					Depth: b.depth, BatchesPerSec: benchBatches / per.Seconds()})
				return nil
			}); err != nil {
				return fail(label, err)
			}
		}
	}
	prog.finish()
	rep.ElapsedNS = since(start).Nanoseconds()

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cdevice bench: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	printBench(stdout, &rep)
	return exitOK
}

func printBench(w io.Writer, rep *benchReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tDEVICE\tIMPORT\tRESULT")
	for _, c := range rep.Copy {
		fmt.Fprintf(tw, "copy host→device, %s int64\t%s\t-\t%s (%s)\n", formatBytes(c.Bytes), c.Device, formatRate(c.HostToDeviceBytesPerS), roundDuration(time.Duration(c.HostToDeviceNS)))
		fmt.Fprintf(tw, "copy device→host, %s int64\t%s\t-\t%s (%s)\n", formatBytes(c.Bytes), c.Device, formatRate(c.DeviceToHostBytesPerS), roundDuration(time.Duration(c.DeviceToHostNS)))
	}
	for _, e := range rep.ExportImport {
		fmt.Fprintf(tw, "export+import, %d columns × %d rows\thost\t%s\t%.2f µs per round trip\n", e.Columns, e.Rows, e.Import, e.USPerRoundTrip)
	}
	for _, s := range rep.Streams {
		name := fmt.Sprintf("%s, %d batches", s.Interface, s.Batches)
		if s.Depth > 0 {
			name = fmt.Sprintf("%s (depth %d), %d batches", s.Interface, s.Depth, s.Batches)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s batches/s\n", name, s.Device, s.Import, formatCount(s.BatchesPerSec))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ncopies: median of %d; streams: median of %d runs of %d batches of %d columns × %d rows; %s in all.\n",
		benchCopyReps, benchStreamReps, benchBatches, 16, benchWideRows, roundDuration(time.Duration(rep.ElapsedNS)))
	fmt.Fprintln(w, `"C path": imports read the structs as a C producer's; "identity": Go-to-Go shortcut (always on in the library).`)
}

// benchCopy measures CopyToDevice and ToHost of an int64 array of size bytes.
func benchCopy(ctx context.Context, dev device.Device, size int64) (copyResult, error) {
	r := copyResult{Device: spec(dev), Bytes: size}
	n := int(size / 8)
	if int64(n) != size/8 {
		return r, fmt.Errorf("--size %d is too large for this platform", size)
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i) * 7
	}
	data := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0)
	src := array.NewInt64Data(data)
	data.Release()
	defer src.Release()

	var da *cdevice.DeviceArray
	defer func() {
		if da != nil {
			da.Release()
		}
	}()
	up, err := medianPerCall(benchCopyReps, func() error {
		d, err := cdevice.CopyToDevice(ctx, src, dev)
		if err != nil {
			return fmt.Errorf("CopyToDevice: %w", err)
		}
		if da != nil {
			da.Release()
		}
		da = d
		return nil
	})
	if err != nil {
		return r, err
	}
	checked := false
	down, err := medianPerCall(benchCopyReps, func() error {
		host, err := da.ToHost(ctx)
		if err != nil {
			return fmt.Errorf("ToHost: %w", err)
		}
		defer host.Release()
		got := host.(*array.Int64)
		if !checked && (got.Len() != n || got.Value(0) != 0 || got.Value(n-1) != int64(n-1)*7) {
			return errors.New("the copy back differs from the original")
		}
		checked = true
		return nil
	})
	if err != nil {
		return r, err
	}
	r.HostToDeviceNS, r.DeviceToHostNS = up.Nanoseconds(), down.Nanoseconds()
	r.HostToDeviceBytesPerS = float64(size) / up.Seconds()
	r.DeviceToHostBytesPerS = float64(size) / down.Seconds()
	return r, nil
}

// benchExportImport returns the µs per ExportRecordBatch + ImportRecordBatch
// + Release of rec: the median of 5 timings of enough round trips to take
// minTiming.
func benchExportImport(rec arrow.RecordBatch) (float64, error) {
	arr, sch := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	defer cdevice.Free(arr)
	defer cdevice.Free(sch)
	once := func() error {
		if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
			return fmt.Errorf("ExportRecordBatch: %w", err)
		}
		got, err := cdevice.ImportRecordBatch(arr, sch)
		if err != nil {
			return fmt.Errorf("ImportRecordBatch: %w", err)
		}
		got.Release()
		return nil
	}
	per, err := medianPerCall(5, once)
	if err != nil {
		return 0, err
	}
	return float64(per.Nanoseconds()) / 1e3, nil
}

// hostStreamOnce sends benchBatches references to rec through an
// ArrowArrayStream and reads them all.
func hostStreamOnce(ctx context.Context, rec arrow.RecordBatch, _ device.Device) error {
	recs := make([]arrow.RecordBatch, benchBatches)
	for i := range recs {
		recs[i] = rec
	}
	rdr, err := array.NewRecordReader(rec.Schema(), recs)
	if err != nil {
		return err
	}
	defer rdr.Release()
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReader(rdr, s); err != nil {
		return fmt.Errorf("ExportReader: %w", err)
	}
	r, err := stream.ImportReader(s)
	if err != nil {
		return fmt.Errorf("ImportReader: %w", err)
	}
	defer r.Release()
	return drain(r.All(ctx))
}

// repeated yields db benchBatches times, a reference each (Produce and
// ExportDeviceStream take ownership of what they are given).
func repeated(db *cdevice.DeviceRecordBatch) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for range benchBatches {
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
}

// deviceStreamOnce sends rec, copied to dev once, benchBatches times
// through an ArrowDeviceArrayStream.
func deviceStreamOnce(ctx context.Context, rec arrow.RecordBatch, dev device.Device) error {
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		return fmt.Errorf("CopyRecordBatchToDevice: %w", err)
	}
	defer db.Release()
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportDeviceStream(rec.Schema(), dev.Type(), repeated(db), s); err != nil {
		return fmt.Errorf("ExportDeviceStream: %w", err)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		return fmt.Errorf("ImportDeviceStream: %w", err)
	}
	defer r.Release()
	return drain(r.All(ctx))
}

// asyncOnce drives a handler of queue depth benchAsyncDepth with async.Produce
// from rec, copied to dev once, benchBatches times.
func asyncOnce(ctx context.Context, rec arrow.RecordBatch, dev device.Device) error {
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		return fmt.Errorf("CopyRecordBatchToDevice: %w", err)
	}
	defer db.Release()
	h, err := async.NewHandler(async.WithQueueDepth(benchAsyncDepth))
	if err != nil {
		return fmt.Errorf("NewHandler: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	produced := make(chan error, 1)
	go func() {
		produced <- async.Produce(pctx, rec.Schema(), dev.Type(), async.Batches(repeated(db)), h.C())
	}()
	if readErr := drain(h.All(ctx)); readErr != nil {
		cancel()
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = h.Close(cctx)
		return readErr
	}
	if err := <-produced; err != nil {
		return fmt.Errorf("async.Produce: %w", err)
	}
	return h.Close(ctx)
}

// drain reads every batch of seq and checks that there were benchBatches.
func drain[T any](seq iter.Seq2[T, error]) error {
	n := 0
	for _, err := range seq {
		if err != nil {
			return err
		}
		n++
	}
	if n != benchBatches {
		return fmt.Errorf("read %d batches, want %d", n, benchBatches)
	}
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func formatRate(bytesPerSec float64) string {
	if bytesPerSec >= 1e9 {
		return fmt.Sprintf("%.2f GB/s", bytesPerSec/1e9)
	}
	return fmt.Sprintf("%.1f MB/s", bytesPerSec/1e6)
}

func formatCount(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}
