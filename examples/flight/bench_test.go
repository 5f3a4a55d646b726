package main

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// The benchmarks move a 256 MiB stream (256 batches of one 1 MiB int64
// column) over loopback gRPC, DoGet and DoPut: through cdevice (a device
// stream on the sending side, brought to the host and written; on the
// receiving side landed on the device and read by a consumer of the exported
// ArrowDeviceArrayStream), and through arrow-go Flight alone (the same
// batches written with flight.NewRecordWriter, read with
// flight.NewRecordReader).
const (
	benchBatches = 256
	benchBatch   = 1 << 20
)

// BenchmarkDoGetCdevice: the cdevice path, CPU device on both sides.
func BenchmarkDoGetCdevice(b *testing.B) {
	sc, recs := genBatches(benchBatches, benchBatch)
	defer releaseAll(recs)
	c := start(b, &Server{Open: func(ctx context.Context, _ []byte, out *abi.DeviceArrayStream) error {
		return exportBatches(ctx, sc, recs, device.CPU, out)
	}}).client
	ctx := context.Background()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	b.SetBytes(benchBatches * benchBatch)
	b.ResetTimer()
	for b.Loop() {
		if err := Get(ctx, c, []byte("bench"), device.CPU, cs); err != nil {
			b.Fatal(err)
		}
		n, err := consumeCount(ctx, cs)
		if err != nil {
			b.Fatal(err)
		}
		if n.Rows != benchBatches*benchBatch/8 {
			b.Fatalf("%d rows", n.Rows)
		}
	}
}

// plainServer serves the batches with arrow-go Flight only.
type plainServer struct {
	flight.BaseFlightServer
	sc   *arrow.Schema
	recs []arrow.RecordBatch
}

func (s *plainServer) DoGet(_ *flight.Ticket, fs flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(fs, ipc.WithSchema(s.sc))
	for _, rb := range s.recs {
		if err := w.Write(rb); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// BenchmarkDoGetPlainFlight: arrow-go Flight moving the same batches.
func BenchmarkDoGetPlainFlight(b *testing.B) {
	sc, recs := genBatches(benchBatches, benchBatch)
	defer releaseAll(recs)
	c := start(b, &plainServer{sc: sc, recs: recs}).client
	ctx := context.Background()
	b.SetBytes(benchBatches * benchBatch)
	b.ResetTimer()
	for b.Loop() {
		fs, err := c.DoGet(ctx, &flight.Ticket{Ticket: []byte("bench")})
		if err != nil {
			b.Fatal(err)
		}
		rdr, err := flight.NewRecordReader(fs)
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for rdr.Next() {
			rows += rdr.RecordBatch().NumRows()
		}
		if err := rdr.Err(); err != nil && err != io.EOF {
			b.Fatal(err)
		}
		rdr.Release()
		if rows != benchBatches*benchBatch/8 {
			b.Fatalf("%d rows", rows)
		}
	}
}

// BenchmarkDoPutCdevice: the cdevice path, CPU device on both sides: Put
// sends a device stream, the server lands the batches on its device and a
// consumer reads the exported ArrowDeviceArrayStream.
func BenchmarkDoPutCdevice(b *testing.B) {
	sc, recs := genBatches(benchBatches, benchBatch)
	defer releaseAll(recs)
	var rows atomic.Int64
	c := start(b, &Server{Device: device.CPU, Consume: func(ctx context.Context, _ *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
		n, err := consumeCount(ctx, in)
		rows.Store(n.Rows)
		return err
	}}).client
	ctx := context.Background()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("bench")}
	b.SetBytes(benchBatches * benchBatch)
	b.ResetTimer()
	for b.Loop() {
		rows.Store(0)
		if err := exportBatches(ctx, sc, recs, device.CPU, cs); err != nil {
			b.Fatal(err)
		}
		if err := Put(ctx, c, desc, cs); err != nil {
			b.Fatal(err)
		}
		if n := rows.Load(); n != benchBatches*benchBatch/8 {
			b.Fatalf("%d rows", n)
		}
	}
}

// plainPutServer reads DoPut batches with arrow-go Flight only.
type plainPutServer struct {
	flight.BaseFlightServer
	rows atomic.Int64
}

func (s *plainPutServer) DoPut(ps flight.FlightService_DoPutServer) error {
	rdr, err := flight.NewRecordReader(ps)
	if err != nil {
		return err
	}
	defer rdr.Release()
	var rows int64
	for rdr.Next() {
		rows += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil && err != io.EOF {
		return err
	}
	s.rows.Store(rows)
	return ps.Send(&flight.PutResult{})
}

// BenchmarkDoPutPlainFlight: arrow-go Flight moving the same batches.
func BenchmarkDoPutPlainFlight(b *testing.B) {
	sc, recs := genBatches(benchBatches, benchBatch)
	defer releaseAll(recs)
	srv := &plainPutServer{}
	c := start(b, srv).client
	ctx := context.Background()
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("bench")}
	b.SetBytes(benchBatches * benchBatch)
	b.ResetTimer()
	for b.Loop() {
		srv.rows.Store(0)
		ps, err := c.DoPut(ctx)
		if err != nil {
			b.Fatal(err)
		}
		w := flight.NewRecordWriter(ps, ipc.WithSchema(sc))
		w.SetFlightDescriptor(desc)
		for _, rb := range recs {
			if err := w.Write(rb); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := ps.CloseSend(); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := ps.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		if n := srv.rows.Load(); n != benchBatches*benchBatch/8 {
			b.Fatalf("%d rows", n)
		}
	}
}
