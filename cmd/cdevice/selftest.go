package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/debug"
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

const selftestUsage = `usage: cdevice selftest [--device D] [--json]

Round trip a sample record batch that covers every Arrow type family (ints
of every width, floats with float16, decimals 32 to 256, bool, dates, times,
timestamps with zones, durations, intervals, strings, binaries and their
views, fixed-size binary, lists of every kind, struct, map, sparse and dense
unions, dictionaries, run-end encoding, extension types; with nulls and sliced
columns) in batches of 8 rows, a slice of them, 504 rows, none, and nulls only,
through the C interfaces, on the CPU and on every device 'cdevice devices'
lists (or only the one --device, else CDEVICE_DEVICE, names):

  ArrowDeviceArray         CopyRecordBatchToDevice, Export, ImportDeviceRecordBatchOnDevice, ToHost
  ArrowDeviceArrayStream   stream.ExportReaderToDevice, stream.ImportDeviceStream, HostRecords
  ArrowAsyncDeviceStream   async.Produce into an async.Handler, ToHost

Each runs twice: with the import path a C producer's structs take ("C path")
and with the Go-to-Go identity shortcut ("identity", always on in the library).
Every batch that comes back must equal the original (array.RecordEqual, schema
and metadata too) and pass full validation (cdevice.WithFullValidation).
A failing check is retried column by column to name the columns at fault.
Finally nothing may be left held across the C boundary (cdevice.LiveLeaks).

Exit status: 0 when every check passed, 1 when one failed, 2 on a usage error.

flags:
`

// The interfaces a selftest round trips through.
var selftestInterfaces = []struct {
	name string
	run  func(ctx context.Context, dev device.Device, want []arrow.RecordBatch) error
}{
	{"ArrowDeviceArray", viaDeviceArray},
	{"ArrowDeviceArrayStream", viaDeviceStream},
	{"ArrowAsyncDeviceStream", viaAsync},
}

// The import paths each interface runs with.
var importPaths = []struct {
	name     string
	identity bool
}{
	{"C path", false},
	{"identity", true},
}

// A checkResult is one (device, interface, import path) round trip.
type checkResult struct {
	Device         string         `json:"device"`
	Interface      string         `json:"interface"`
	Import         string         `json:"import"`
	Pass           bool           `json:"pass"`
	ElapsedNS      int64          `json:"elapsed_ns"` // 0 within one clock tick (since)
	Error          string         `json:"error,omitempty"`
	FailingColumns []columnResult `json:"failing_columns,omitempty"`
}

type columnResult struct {
	Column string `json:"column"`
	Type   string `json:"type"`
	Error  string `json:"error"`
}

type selftestReport struct {
	Devices []string `json:"devices"`
	Sample  struct {
		Columns int      `json:"columns"`
		Batches []int64  `json:"batch_rows"`
		Types   []string `json:"types"`
	} `json:"sample"`
	Checks []checkResult `json:"checks"`
	Leaks  struct {
		Pass   bool   `json:"pass"`
		Detail string `json:"detail,omitempty"`
	} `json:"leaks"`
	Passed int  `json:"passed"`
	Failed int  `json:"failed"`
	Pass   bool `json:"pass"`
}

func selftest(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("selftest", selftestUsage, stderr)
	devSpec := fs.String("device", "", "test only this device: cpu, opencl:0, cuda:0, hip:0, ... (default: $CDEVICE_DEVICE, else the CPU and every device found)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "selftest", "unexpected argument %q (name a device with --device)", rest[0])
	}

	ctx := context.Background()
	devs, code, ok := pickDevices("selftest", *devSpec, stderr)
	if !ok {
		return code
	}

	// The sample's memory is checked: an export that never lets go of the
	// batch it exported shows up as memory still allocated at the end.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	batches, err := sample.Batches(mem)
	if err != nil {
		fmt.Fprintf(stderr, "cdevice selftest: building the sample batches: %v\n", err)
		return exitFail
	}

	var rep selftestReport
	sc := batches[0].Schema()
	rep.Sample.Columns = sc.NumFields()
	for _, b := range batches {
		rep.Sample.Batches = append(rep.Sample.Batches, b.NumRows())
	}
	for _, f := range sc.Fields() {
		rep.Sample.Types = append(rep.Sample.Types, f.Type.String())
	}
	for _, d := range devs {
		rep.Devices = append(rep.Devices, spec(d))
	}

	prog := newProgress(stdout, stderr, !*asJSON && isTerminal(stdout), len(devs)*len(selftestInterfaces)*len(importPaths))
	oldIdentity := identity.Enabled()
	for _, d := range devs {
		for _, itf := range selftestInterfaces {
			for _, ip := range importPaths {
				label := fmt.Sprintf("%s %s (%s)", spec(d), itf.name, ip.name)
				prog.start(label)
				identity.Set(ip.identity)
				res := checkResult{Device: spec(d), Interface: itf.name, Import: ip.name}
				t0 := now()
				err := guarded(ctx, stderr, itf.run, d, batches)
				res.ElapsedNS = since(t0).Nanoseconds()
				res.Pass = err == nil
				if err != nil {
					res.Error = err.Error()
					res.FailingColumns = failingColumns(ctx, stderr, itf.run, d, batches)
				}
				rep.Checks = append(rep.Checks, res)
				prog.done(label, res.Pass, time.Duration(res.ElapsedNS))
			}
		}
	}
	identity.Set(oldIdentity)
	prog.finish()

	for _, b := range batches {
		b.Release()
	}
	leaks := cdevice.LiveLeaks()
	rep.Leaks.Pass = leaks.Zero() && mem.CurrentAlloc() == 0
	if !leaks.Zero() {
		rep.Leaks.Detail = leaks.String()
	}
	if n := mem.CurrentAlloc(); n != 0 {
		if rep.Leaks.Detail != "" {
			rep.Leaks.Detail += "; "
		}
		rep.Leaks.Detail += fmt.Sprintf("%d bytes of the sample batch still referenced (an export or import never released)", n)
	}
	for _, c := range rep.Checks {
		if c.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	rep.Pass = rep.Failed == 0 && rep.Leaks.Pass

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cdevice selftest: %v\n", err)
			return exitFail
		}
	} else {
		printSelftest(stdout, &rep)
	}
	if !rep.Pass {
		return exitFail
	}
	return exitOK
}

func printSelftest(w io.Writer, rep *selftestReport) {
	fmt.Fprintf(w, "sample: %d columns (every type family, nulls, sliced columns) in batches of %s rows\n\n",
		rep.Sample.Columns, joinInts(rep.Sample.Batches))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tINTERFACE\tIMPORT\tRESULT\tTIME")
	for _, c := range rep.Checks {
		result := "pass"
		if !c.Pass {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Device, c.Interface, c.Import, result, roundDuration(time.Duration(c.ElapsedNS)))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if rep.Leaks.Pass {
		fmt.Fprintln(w, "leak check: pass (nothing left held across the C boundary)")
	} else {
		fmt.Fprintf(w, "leak check: FAIL: %s\n", rep.Leaks.Detail)
	}
	if rep.Failed > 0 {
		fmt.Fprintln(w, "\nfailures:")
		for _, c := range rep.Checks {
			if c.Pass {
				continue
			}
			fmt.Fprintf(w, "  %s %s (%s): %s\n", c.Device, c.Interface, c.Import, c.Error)
			if len(c.FailingColumns) == 0 {
				fmt.Fprintln(w, "    no column fails on its own: the failure needs the whole batch")
			}
			for _, col := range c.FailingColumns {
				fmt.Fprintf(w, "    column %s (%s): %s\n", col.Column, col.Type, col.Error)
			}
		}
	}
	fmt.Fprintln(w)
	if rep.Pass {
		fmt.Fprintf(w, "selftest passed: %d of %d checks on %s.\n", rep.Passed, len(rep.Checks), strings.Join(rep.Devices, ", "))
		return
	}
	fmt.Fprintf(w, "selftest FAILED: %d of %d checks failed on %s", rep.Failed, len(rep.Checks), strings.Join(rep.Devices, ", "))
	if !rep.Leaks.Pass {
		fmt.Fprint(w, ", and the leak check failed")
	}
	fmt.Fprintln(w, ".\nRerun one device with --device to narrow it down; report the bug with the\noutput of 'cdevice devices --json' and 'cdevice selftest --json'.")
}

// guarded runs one round trip with a time limit, turning a panic into an
// error (its stack goes to stderr).
func guarded(ctx context.Context, stderr io.Writer, run func(context.Context, device.Device, []arrow.RecordBatch) error,
	dev device.Device, want []arrow.RecordBatch) (err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			fmt.Fprintf(stderr, "cdevice selftest: panic on %s: %v\n%s\n", spec(dev), p, debug.Stack())
		}
	}()
	return run(ctx, dev, want)
}

// failingColumns retries a failed round trip with one column at a time and
// returns the columns that fail on their own.
func failingColumns(ctx context.Context, stderr io.Writer, run func(context.Context, device.Device, []arrow.RecordBatch) error,
	dev device.Device, batches []arrow.RecordBatch) []columnResult {
	var out []columnResult
	sc := batches[0].Schema()
	for i, f := range sc.Fields() {
		one := arrow.NewSchema([]arrow.Field{f}, nil)
		sub := make([]arrow.RecordBatch, len(batches))
		for j, b := range batches {
			sub[j] = array.NewRecordBatch(one, []arrow.Array{b.Column(i)}, b.NumRows())
		}
		if err := guarded(ctx, stderr, run, dev, sub); err != nil {
			out = append(out, columnResult{Column: f.Name, Type: f.Type.String(), Error: err.Error()})
		}
		for _, b := range sub {
			b.Release()
		}
	}
	return out
}

// viaDeviceArray: copy each batch to dev, export it as an ArrowDeviceArray,
// import that, copy it back.
func viaDeviceArray(ctx context.Context, dev device.Device, want []arrow.RecordBatch) error {
	for i, rec := range want {
		if err := deviceArrayOnce(ctx, dev, rec); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
	}
	return nil
}

func deviceArrayOnce(ctx context.Context, dev device.Device, rec arrow.RecordBatch) error {
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		return fmt.Errorf("CopyRecordBatchToDevice: %w", err)
	}
	arr, sch := cdevice.New[abi.DeviceArray](), cdevice.New[abi.Schema]()
	defer cdevice.Free(arr)
	defer cdevice.Free(sch)
	err = db.Export(arr, sch)
	db.Release() // the export holds its own reference
	if err != nil {
		return fmt.Errorf("DeviceRecordBatch.Export: %w", err)
	}
	var wrong error
	switch {
	case arr.DeviceType != dev.Type() || arr.DeviceID != dev.ID():
		wrong = fmt.Errorf("exported as %s:%d, want %s:%d", arr.DeviceType, arr.DeviceID, dev.Type(), dev.ID())
	case dev.Type() == abi.DeviceCPU && arr.SyncEvent != 0:
		wrong = errors.New("a CPU ArrowDeviceArray has a non-NULL sync_event")
	}
	got, err := cdevice.ImportDeviceRecordBatchOnDevice(ctx, arr, sch) // releases arr and sch, also on failure
	if err != nil {
		return fmt.Errorf("ImportDeviceRecordBatchOnDevice: %w", err)
	}
	host, err := got.ToHost(ctx)
	got.Release()
	if err != nil {
		return fmt.Errorf("ToHost: %w", err)
	}
	defer host.Release()
	if wrong != nil {
		return wrong
	}
	return sameBatch(rec, host, true)
}

// viaDeviceStream: export the batches as an ArrowDeviceArrayStream on dev
// and read them back to the host.
func viaDeviceStream(ctx context.Context, dev device.Device, want []arrow.RecordBatch) error {
	rdr, err := array.NewRecordReader(want[0].Schema(), want)
	if err != nil {
		return err
	}
	defer rdr.Release() // the export holds its own reference
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReaderToDevice(ctx, rdr, dev, s); err != nil {
		return fmt.Errorf("ExportReaderToDevice: %w", err)
	}
	r, err := stream.ImportDeviceStream(s, stream.WithImportOptions(cdevice.WithFullValidation()))
	if err != nil {
		return fmt.Errorf("ImportDeviceStream: %w", err)
	}
	defer r.Release()
	if r.DeviceType() != dev.Type() {
		return fmt.Errorf("stream on device type %s, want %s", r.DeviceType(), dev.Type())
	}
	if err := sameSchema(want[0].Schema(), r.Schema()); err != nil {
		return fmt.Errorf("get_schema: %w", err)
	}
	n := 0
	for rec, err := range r.HostRecords(ctx) {
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		var bad error
		if n >= len(want) {
			bad = fmt.Errorf("batch %d: the stream has more batches than the %d sent", n, len(want))
		} else if err := sameBatch(want[n], rec, false); err != nil {
			bad = fmt.Errorf("batch %d: %w", n, err)
		}
		if bad != nil {
			return bad
		}
		n++
	}
	if n != len(want) {
		return fmt.Errorf("the stream ended after %d batches, want %d", n, len(want))
	}
	return nil
}

// numbered is an async.Produce source of seq's batches, each with task
// metadata {"batch": "<n>"}, n counting from 0.
func numbered(seq iter.Seq2[*cdevice.DeviceRecordBatch, error]) iter.Seq2[async.Batch, error] {
	return func(yield func(async.Batch, error) bool) {
		n := 0
		for db, err := range seq {
			if !yield(async.Batch{DeviceRecordBatch: db, Metadata: arrow.NewMetadata([]string{"batch"}, []string{strconv.Itoa(n)})}, err) {
				return
			}
			n++
		}
	}
}

// viaAsync: drive an async handler with async.Produce from the batches
// copied to dev, and copy what the handler receives back to the host.
func viaAsync(ctx context.Context, dev device.Device, want []arrow.RecordBatch) (err error) {
	sc := want[0].Schema()
	rdr, err := array.NewRecordReader(sc, want)
	if err != nil {
		return err
	}
	defer rdr.Release()
	h, err := async.NewHandler(async.WithQueueDepth(2))
	if err != nil {
		return fmt.Errorf("NewHandler: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	md := arrow.NewMetadata([]string{"batches"}, []string{strconv.Itoa(len(want))})
	produced := make(chan error, 1)
	go func() {
		produced <- async.Produce(pctx, sc, dev.Type(), numbered(cdevice.CopyReaderToDevice(pctx, rdr, dev)), h.C(),
			async.WithAdditionalMetadata(md))
	}()
	finished := false
	defer func() {
		if finished {
			return
		}
		// Stop the producer and wait for it, so that nothing outlives the check.
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		cancel()
		if cerr := h.Close(cctx); cerr != nil {
			err = fmt.Errorf("%w (and closing the handler: %v)", err, cerr)
		}
		select {
		case <-produced:
		case <-cctx.Done():
		}
	}()

	got, err := h.Schema(ctx)
	if err != nil {
		return fmt.Errorf("on_schema: %w", err)
	}
	if err := sameSchema(sc, got); err != nil {
		return fmt.Errorf("on_schema: %w", err)
	}
	if am := h.AdditionalMetadata(); !am.Equal(md) {
		return fmt.Errorf("additional_metadata is %v, want %v", am, md)
	}
	n := 0
	for b, err := range h.All(ctx) {
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		if n >= len(want) {
			return fmt.Errorf("batch %d: the handler got more batches than the %d sent", n, len(want))
		}
		if d := b.Device(); d == nil || d.Type() != dev.Type() || d.ID() != dev.ID() {
			return fmt.Errorf("batch %d: on device %v, want %s", n, d, spec(dev))
		}
		if v, ok := b.Metadata.GetValue("batch"); !ok || v != strconv.Itoa(n) {
			return fmt.Errorf("batch %d: task metadata %v, want batch=%d", n, b.Metadata, n)
		}
		host, err := b.ToHost(ctx)
		if err != nil {
			return fmt.Errorf("batch %d: ToHost: %w", n, err)
		}
		err = sameBatch(want[n], host, true)
		host.Release()
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		n++
	}
	if n != len(want) {
		return fmt.Errorf("the handler got %d batches, want %d", n, len(want))
	}
	if err := <-produced; err != nil {
		return fmt.Errorf("async.Produce: %w", err)
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		return fmt.Errorf("the producer did not release the handler: %w", ctx.Err())
	}
	finished = true
	return h.Close(ctx)
}

// sameSchema compares fields (names, types, nullability, field metadata) and
// schema metadata.
func sameSchema(want, got *arrow.Schema) error {
	if got == nil {
		return errors.New("no schema")
	}
	if !want.Equal(got) {
		return fmt.Errorf("schema differs:\nwant %v\ngot  %v", want, got)
	}
	if !want.Metadata().Equal(got.Metadata()) {
		return fmt.Errorf("schema metadata is %v, want %v", got.Metadata(), want.Metadata())
	}
	for i, f := range want.Fields() {
		if !f.Metadata.Equal(got.Field(i).Metadata) {
			return fmt.Errorf("field %s: metadata is %v, want %v", f.Name, got.Field(i).Metadata, f.Metadata)
		}
	}
	return nil
}

// sameBatch checks got against want: schema, values (naming the columns
// that differ), and, when validate is set, full validation of got (streams
// validate on import already).
func sameBatch(want, got arrow.RecordBatch, validate bool) error {
	if err := sameSchema(want.Schema(), got.Schema()); err != nil {
		return err
	}
	if validate {
		if err := cdevice.ValidateRecordBatch(got, cdevice.WithFullValidation()); err != nil {
			return fmt.Errorf("full validation: %w", err)
		}
	}
	if array.RecordEqual(want, got) {
		return nil
	}
	if want.NumRows() != got.NumRows() || want.NumCols() != got.NumCols() {
		return fmt.Errorf("got %d rows × %d columns, want %d × %d", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
	}
	var diffs []string
	for i := range want.Columns() {
		if !array.Equal(want.Column(i), got.Column(i)) {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", want.ColumnName(i), clip(got.Column(i)), clip(want.Column(i))))
		}
	}
	return fmt.Errorf("values differ in %d columns: %s", len(diffs), strings.Join(diffs, "; "))
}

func clip(a arrow.Array) string { return shorten(strings.ReplaceAll(a.String(), "\n", " "), 201) }

func joinInts(ns []int64) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.FormatInt(n, 10)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// roundDuration rounds d to three significant digits or so for a table.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}

// isTerminal reports whether w is a terminal (a character device), without
// golang.org/x/term.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
