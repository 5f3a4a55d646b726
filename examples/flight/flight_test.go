package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/loader"
	"github.com/purearrow/cdevice/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestMain fails the binary unless everything that crossed the C boundary
// was released.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := waitNoLeaks(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "at exit:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// goldDir is the Arrow integration gold files, from this directory.
var goldDir = filepath.Join("..", "..", "..", "shared", "testdata", "arrow-integration", "cpp-21.0.0")

// waitNoLeaks waits until cdevice holds nothing across the C boundary.
func waitNoLeaks(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		l := cdevice.LiveLeaks()
		if l.Zero() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cdevice objects still live: %v", l)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// checkClean fails t unless, once the test's servers and clients are gone,
// nothing is live across the C boundary and the goroutines are back to
// what they were at the start (gRPC's goroutines end asynchronously).
func checkClean(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		if err := waitNoLeaks(10 * time.Second); err != nil {
			t.Error(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("goroutine leak: %d at start, %d now:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// harness is a server on a loopback port and a client of it.
type harness struct {
	gs     *grpc.Server
	client flight.Client
	served chan error
}

// start serves srv over real gRPC on loopback; cleanup stops both ends
// (registered after checkClean's, so it runs first).
func start(t testing.TB, srv flight.FlightServer) *harness {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{gs: grpc.NewServer(), served: make(chan error, 1)}
	flight.RegisterFlightServiceServer(h.gs, srv)
	go func() { h.served <- h.gs.Serve(lis) }()
	c, err := dial(lis.Addr().String())
	if err != nil {
		h.gs.Stop()
		t.Fatal(err)
	}
	h.client = c
	t.Cleanup(func() {
		c.Close()
		h.gs.Stop()
		<-h.served
	})
	return h
}

// goldFiles lists the gold files; a case arrow-go cannot read is skipped.
func goldFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldDir, "*.arrow_file"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no gold files in %s (this module expects a checkout beside ../shared)", goldDir)
	}
	return files
}

// collect imports a device stream and keeps its batches, on the host.
func collect(ctx context.Context, in *abi.DeviceArrayStream) ([]arrow.RecordBatch, *arrow.Schema, error) {
	rdr, err := stream.ImportDeviceStream(in)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var out []arrow.RecordBatch
	for rb, err := range rdr.HostRecords(ctx) {
		if err != nil {
			releaseAll(out)
			return nil, nil, err
		}
		rb.Retain()
		out = append(out, rb)
	}
	return out, rdr.Schema(), nil
}

func sameBatches(t *testing.T, what string, want, got []arrow.RecordBatch) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !want[i].Schema().Equal(got[i].Schema()) {
			t.Errorf("%s: batch %d: schema\n%v\nwant\n%v", what, i, got[i].Schema(), want[i].Schema())
		}
		if !array.RecordEqual(want[i], got[i]) {
			t.Errorf("%s: batch %d differs:\n got %v\nwant %v", what, i, got[i], want[i])
		}
	}
}

func defaultDevice(t *testing.T) device.Device {
	t.Helper()
	dev, _, err := loader.Default(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// TestGoldDoGet: every gold file's batches, served from a device stream,
// arrive equal after landing on the client's default device.
func TestGoldDoGet(t *testing.T) {
	checkClean(t)
	dev := defaultDevice(t)
	h := start(t, newServer(goldDir, device.CPU, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, file := range goldFiles(t) {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".arrow_file"), func(t *testing.T) {
			sc, want, err := readArrowFile(file)
			if err != nil {
				t.Skipf("arrow-go cannot read it: %v", err)
			}
			defer releaseAll(want)
			cs := cdevice.New[abi.DeviceArrayStream]()
			defer cdevice.Free(cs)
			if err := Get(ctx, h.client, []byte(name), dev, cs); err != nil {
				t.Fatal(err)
			}
			if cs.DeviceType != dev.Type() {
				t.Errorf("stream device type %v, want %v", cs.DeviceType, dev.Type())
			}
			got, gotSchema, err := collect(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseAll(got)
			if !gotSchema.Equal(sc) {
				t.Errorf("schema\n%v\nwant\n%v", gotSchema, sc)
			}
			sameBatches(t, name, want, got)
		})
	}
}

// TestGoldDoPut: every gold file's batches, sent from a device stream,
// arrive equal in the server's consumer after landing on its device.
func TestGoldDoPut(t *testing.T) {
	checkClean(t)
	var mu sync.Mutex
	received := map[string][]arrow.RecordBatch{}
	srv := &Server{
		Device: defaultDevice(t),
		Consume: func(ctx context.Context, desc *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
			if in.DeviceType != defaultDevice(t).Type() {
				cdevice.ReleaseDeviceArrayStream(in)
				return fmt.Errorf("device type %v", in.DeviceType)
			}
			got, _, err := collect(ctx, in)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			received[strings.Join(desc.GetPath(), "/")] = got
			return nil
		},
	}
	h := start(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, file := range goldFiles(t) {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".arrow_file"), func(t *testing.T) {
			sc, want, err := readArrowFile(file)
			if err != nil {
				t.Skipf("arrow-go cannot read it: %v", err)
			}
			defer releaseAll(want)
			cs := cdevice.New[abi.DeviceArrayStream]()
			defer cdevice.Free(cs)
			if err := exportBatches(ctx, sc, want, device.CPU, cs); err != nil {
				t.Fatal(err)
			}
			if err := Put(ctx, h.client, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}}, cs); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got, ok := received[name]
			delete(received, name)
			mu.Unlock()
			if !ok {
				t.Fatal("the server's consumer received nothing")
			}
			defer releaseAll(got)
			sameBatches(t, name, want, got)
		})
	}
}

// TestCPeers: a C producer behind DoGet, a C consumer behind the client;
// and a C producer's stream sent with DoPut to a C consumer on the server.
func TestCPeers(t *testing.T) {
	checkClean(t)
	p := loadPeer(t)
	const batches, rows = 10, 1000
	const n = batches * rows
	const wantSum = n * (n - 1) / 2
	type result struct{ batches, rows, sum int64 }
	putResult := make(chan result, 1)
	srv := &Server{
		Open: func(ctx context.Context, ticket []byte, out *abi.DeviceArrayStream) error {
			if rc := p.produce(out, batches, rows); rc != 0 {
				return fmt.Errorf("C producer: rc %d", rc)
			}
			return nil
		},
		Device: device.CPU,
		Consume: func(ctx context.Context, desc *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
			b, r, s, err := p.consumeC(in, -1)
			putResult <- result{b, r, s}
			return err
		},
	}
	h := start(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(ctx, h.client, []byte("c"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	b, r, s, err := p.consumeC(cs, -1)
	if err != nil {
		t.Fatal(err)
	}
	if b != batches || r != n || s != wantSum {
		t.Errorf("DoGet: C consumer saw %d batches, %d rows, sum %d; want %d, %d, %d", b, r, s, batches, n, wantSum)
	}
	if !cs.Released() {
		t.Error("the C consumer did not release the stream")
	}

	if rc := p.produce(cs, batches, rows); rc != 0 {
		t.Fatalf("C producer: rc %d", rc)
	}
	if err := Put(ctx, h.client, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("c")}, cs); err != nil {
		t.Fatal(err)
	}
	if got := <-putResult; got != (result{batches, n, wantSum}) {
		t.Errorf("DoPut: C consumer saw %+v, want %+v", got, result{batches, n, wantSum})
	}
}

// exportEndless exports endless(ctx, batch, sent) into out, the stream
// holding a reference to batch until the consumer releases it: a get_next
// the consumer abandoned may still be reading batch after the test let go.
func exportEndless(ctx context.Context, batch arrow.RecordBatch, sent chan<- int, out *abi.DeviceArrayStream) error {
	batch.Retain()
	if err := stream.ExportDeviceStream(batch.Schema(), abi.DeviceCPU, endless(ctx, batch, sent), out, stream.WithOnRelease(batch.Release)); err != nil {
		batch.Release()
		return err
	}
	return nil
}

// endless yields batch forever, signalling sent after each, until ctx is done.
func endless(ctx context.Context, batch arrow.RecordBatch, sent chan<- int) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for i := 0; ; i++ {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			b, err := cdevice.CPURecordBatch(batch)
			if !yield(b, err) || err != nil {
				return
			}
			select {
			case sent <- i:
			default:
			}
		}
	}
}

// startEndless serves, for every ticket, an endless stream of one batch
// (exportEndless, signalling sent) and returns the harness, the batch and
// a channel that receives each DoGet handler's context error once that
// context is done.
func startEndless(t *testing.T, sent chan<- int) (*harness, arrow.RecordBatch, <-chan error) {
	t.Helper()
	batch := genBatch(64 << 10)
	handlerDone := make(chan error, 1)
	h := start(t, &Server{Open: func(ctx context.Context, _ []byte, out *abi.DeviceArrayStream) error {
		go func() { <-ctx.Done(); handlerDone <- ctx.Err() }()
		return exportEndless(ctx, batch, sent, out)
	}})
	t.Cleanup(batch.Release) // before start's cleanup stops the server
	return h, batch, handlerDone
}

// waitHandler fails t with failure unless the server's handler returns
// (handlerDone receives) within 10 seconds.
func waitHandler(t *testing.T, handlerDone <-chan error, failure string) {
	t.Helper()
	select {
	case <-handlerDone:
	case <-time.After(10 * time.Second):
		t.Fatal(failure)
	}
}

// TestClientCancel: the client's context, cancelled mid-stream, ends the
// C consumer's stream with the context's error, the server's handler
// returns, and nothing is left.
func TestClientCancel(t *testing.T) {
	checkClean(t)
	h, batch, handlerDone := startEndless(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(ctx, h.client, []byte("endless"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	rdr, err := stream.ImportDeviceStream(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tctx, tcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer tcancel()
	var n int
	var streamErr error
	for b, err := range rdr.All(tctx) {
		if err != nil {
			streamErr = err
			break
		}
		if b.Length != batch.NumRows() {
			t.Fatalf("batch of %d rows, want %d", b.Length, batch.NumRows())
		}
		if n++; n == 3 {
			cancel()
		}
	}
	if tctx.Err() != nil {
		t.Fatal("the stream did not end after the client's context was cancelled")
	}
	// The error crossed the C ABI (get_next's code and get_last_error's
	// message): the gRPC status survives as text.
	if streamErr == nil || !strings.Contains(streamErr.Error(), "code = Canceled") && !strings.Contains(streamErr.Error(), context.Canceled.Error()) {
		t.Fatalf("stream ended with %v, want the cancellation", streamErr)
	}
	waitHandler(t, handlerDone, "the server's handler is still running")
}

// TestClientStopsEarly: a consumer that releases the stream after two
// batches ends the call (nothing keeps running on either side).
func TestClientStopsEarly(t *testing.T) {
	checkClean(t)
	p := loadPeer(t)
	h, _, handlerDone := startEndless(t, nil)
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(context.Background(), h.client, []byte("endless"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	b, _, _, err := p.consumeC(cs, 2)
	if err != nil || b != 2 {
		t.Fatalf("C consumer: %d batches, %v", b, err)
	}
	waitHandler(t, handlerDone, "the server's handler is still running after the consumer released the stream")
}

// TestClientReleasesUnread: a consumer that releases the stream before
// reading any batch still ends the call (on the CPU through the export's
// stream.WithOnRelease, which runs even when no batch was asked for).
func TestClientReleasesUnread(t *testing.T) {
	checkClean(t)
	h, _, handlerDone := startEndless(t, nil)
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(context.Background(), h.client, []byte("endless"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseDeviceArrayStream(cs)
	waitHandler(t, handlerDone, "the server's handler is still running after the consumer released the stream unread")
}

// TestServerEndsEarly: a server whose stream fails mid-way gives the
// client's consumer that error; a DoPut consumer that stops early gives the
// client's Put an error. Both free everything.
func TestServerEndsEarly(t *testing.T) {
	checkClean(t)
	batch := genBatch(64 << 10)
	defer batch.Release()
	boom := errors.New("producer gave up")
	srv := &Server{
		Open: func(ctx context.Context, _ []byte, out *abi.DeviceArrayStream) error {
			seq := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
				for range 3 {
					b, err := cdevice.CPURecordBatch(batch)
					if !yield(b, err) || err != nil {
						return
					}
				}
				yield(nil, boom)
			}
			return stream.ExportDeviceStream(batch.Schema(), abi.DeviceCPU, seq, out)
		},
		Device: device.CPU,
		Consume: func(ctx context.Context, _ *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
			rdr, err := stream.ImportDeviceStream(in)
			if err != nil {
				return err
			}
			defer rdr.Release()
			b, err := rdr.Next(ctx)
			if err != nil {
				return err
			}
			b.Release()
			return errors.New("consumer has seen enough")
		},
	}
	h := start(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(ctx, h.client, []byte("x"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	got, err := consumeCount(ctx, cs)
	if err == nil || !strings.Contains(err.Error(), boom.Error()) {
		t.Fatalf("DoGet: consumer ended with %v, want the server's %q", err, boom)
	}
	if got.Batches != 3 {
		t.Errorf("DoGet: %d batches before the error, want 3", got.Batches)
	}

	sent := make(chan int, 1)
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	if err := exportEndless(pctx, batch, sent, cs); err != nil {
		t.Fatal(err)
	}
	err = Put(ctx, h.client, &flight.FlightDescriptor{Type: flight.DescriptorCMD}, cs)
	if err == nil || !strings.Contains(err.Error(), "consumer has seen enough") {
		t.Fatalf("DoPut: Put returned %v, want the server consumer's error", err)
	}
}

// TestPutCancel: cancelling the client's context mid-DoPut ends Put with
// the cancellation, and the server's consumer sees the stream fail.
func TestPutCancel(t *testing.T) {
	checkClean(t)
	batch := genBatch(64 << 10)
	defer batch.Release()
	consumerErr := make(chan error, 1)
	srv := &Server{
		Device: device.CPU,
		Consume: func(ctx context.Context, _ *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
			_, err := consumeCount(ctx, in)
			consumerErr <- err
			return err
		},
	}
	h := start(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan int, 1)
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := exportEndless(context.Background(), batch, sent, cs); err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := range sent {
			if i >= 3 {
				cancel()
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- Put(ctx, h.client, &flight.FlightDescriptor{Type: flight.DescriptorCMD}, cs) }()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
			t.Fatalf("Put returned %v, want the cancellation", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Put did not return after its context was cancelled")
	}
	select {
	case err := <-consumerErr:
		if err == nil {
			t.Error("the server's consumer read a cancelled stream to a clean end")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server's consumer is still running")
	}
}

// TestServerDies: stopping the gRPC server while a DoGet is in progress
// gives the client's consumer a clear error, not a hang.
func TestServerDies(t *testing.T) {
	checkClean(t)
	sent := make(chan int, 1)
	h, _, _ := startEndless(t, sent)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(ctx, h.client, []byte("endless"), device.CPU, cs); err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := range sent {
			if i >= 5 {
				h.gs.Stop()
				return
			}
		}
	}()
	got, err := consumeCount(ctx, cs)
	if ctx.Err() != nil {
		t.Fatalf("the client hung until the test's deadline: %v", err)
	}
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d batches although the server died", got.Batches)
	}
	if !strings.Contains(err.Error(), "code = Unavailable") {
		t.Errorf("error %v, want gRPC's Unavailable", err)
	}
	t.Logf("after %d batches: %v", got.Batches, err)
}

// TestBadTickets: bad tickets are errors, never panics.
func TestBadTickets(t *testing.T) {
	checkClean(t)
	h := start(t, newServer(goldDir, device.CPU, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tk := range []string{"", "..", "../x", "/etc/passwd", "gen:", "gen:1", "gen:-1:8", "gen:1:0", "gen:99999999:99999999", "no-such-file", "generated_primitive.json.gz"} {
		cs := cdevice.New[abi.DeviceArrayStream]()
		err := Get(ctx, h.client, []byte(tk), device.CPU, cs)
		if err == nil {
			_, err = consumeCount(ctx, cs)
		}
		cdevice.Free(cs)
		if err == nil {
			t.Errorf("ticket %q: no error", tk)
		}
	}
	if err := Get(ctx, nil, nil, device.CPU, nil); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("Get(nil client): %v", err)
	}
}

// TestDemo runs the command's demo (server, get and put on loopback).
func TestDemo(t *testing.T) {
	checkClean(t)
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, []string{"demo", "-dir", goldDir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"get gen:64:1048576: 64 batches, 8388608 rows",
		"server: put [\"gen:64:1048576\"]: 64 batches, 8388608 rows",
		"get generated_primitive.arrow_file: 2 batches, 37 rows",
		"put generated_primitive.arrow_file: 2 batches sent",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(ctx, []string{"bogus"}, &out); !errors.Is(err, errUsage) {
		t.Errorf("bogus subcommand: %v", err)
	}
}
