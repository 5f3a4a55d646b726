package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/stream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is a Flight service over ArrowDeviceArrayStreams. DoGet asks Open
// for the stream a ticket names, brings each batch to the host and writes
// it as Flight data; DoPut lands each received batch on Device and hands the
// batches to Consume as an ArrowDeviceArrayStream.
type Server struct {
	flight.BaseFlightServer

	// Open fills out with the device stream that ticket names. The server
	// imports it (taking ownership) and releases it when the call ends,
	// whether the stream was read to its end or not. On error out must be
	// left unreleased-untouched (its release member zero).
	Open func(ctx context.Context, ticket []byte, out *abi.DeviceArrayStream) error

	// Device is where DoPut lands batches; nil means device.CPU.
	Device device.Device

	// Consume receives each DoPut's batches as an ArrowDeviceArrayStream on
	// Device, a C consumer's view of them. It owns in: it should release it
	// (the server releases it if Consume did not). An error, or returning
	// before the end of the stream, ends the DoPut call with an error
	// status.
	Consume func(ctx context.Context, desc *flight.FlightDescriptor, in *abi.DeviceArrayStream) error
}

// DoGet implements flight.FlightServer.
func (s *Server) DoGet(tkt *flight.Ticket, fs flight.FlightService_DoGetServer) error {
	if s.Open == nil {
		return status.Error(codes.Unimplemented, "DoGet: no streams served")
	}
	ctx := fs.Context()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := s.Open(ctx, tkt.GetTicket(), cs); err != nil {
		cdevice.ReleaseDeviceArrayStream(cs)
		return status.Errorf(codes.NotFound, "DoGet %q: %v", tkt.GetTicket(), err)
	}
	rdr, err := stream.ImportDeviceStream(cs)
	if err != nil {
		cdevice.ReleaseDeviceArrayStream(cs)
		return status.Errorf(codes.Internal, "DoGet: importing the device stream: %v", err)
	}
	defer rdr.Release()
	if err := sendDevice(ctx, rdr, fs, nil); err != nil {
		return status.Errorf(statusCode(ctx, err), "DoGet: %v", err)
	}
	return nil
}

// DoPut implements flight.FlightServer.
func (s *Server) DoPut(ps flight.FlightService_DoPutServer) error {
	if s.Consume == nil {
		return status.Error(codes.Unimplemented, "DoPut: no consumer")
	}
	ctx := ps.Context()
	rdr, err := flight.NewRecordReader(ps)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "DoPut: reading the schema: %v", err)
	}
	defer rdr.Release()
	dev := s.Device
	if dev == nil {
		dev = device.CPU
	}
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := exportLanded(ctx, rdr, dev, cs); err != nil {
		return status.Errorf(codes.Internal, "DoPut: exporting to %s: %v", dev.Name(), err)
	}
	err = s.Consume(ctx, rdr.LatestFlightDescriptor(), cs)
	cdevice.ReleaseDeviceArrayStream(cs) // if Consume did not
	if err != nil {
		return status.Errorf(statusCode(ctx, err), "DoPut: consumer: %v", err)
	}
	if err := rdr.Err(); err != nil {
		return status.Errorf(statusCode(ctx, err), "DoPut: reading: %v", err)
	}
	return ps.Send(&flight.PutResult{})
}

// statusCode maps err to a gRPC code: a context's error keeps its meaning.
func statusCode(ctx context.Context, err error) codes.Code {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, cdevice.ErrInvalid):
		return codes.InvalidArgument
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code()
	}
	return codes.Internal
}

// sendDevice writes every batch of rdr, brought to the host, as Flight data.
func sendDevice(ctx context.Context, rdr *stream.DeviceReader, w flight.DataStreamWriter, desc *flight.FlightDescriptor) error {
	fw := flight.NewRecordWriter(w, ipc.WithSchema(rdr.Schema()))
	if desc != nil {
		fw.SetFlightDescriptor(desc)
	}
	for rb, err := range rdr.HostRecords(ctx) {
		if err != nil {
			fw.Close()
			return err
		}
		if err := fw.Write(rb); err != nil {
			fw.Close()
			return err
		}
	}
	return fw.Close()
}

// Get calls DoGet for ticket and exports what arrives as an
// ArrowDeviceArrayStream on dev into out: each batch is copied to dev when
// the consumer asks for it, except on the CPU, where the received batches
// are handed out as they are. ctx bounds the whole stream: when it is done the
// call ends and the consumer's next get_next fails. Releasing out before the
// end cancels the call.
func Get(ctx context.Context, c flight.Client, ticket []byte, dev device.Device, out *abi.DeviceArrayStream) error {
	if c == nil || dev == nil || out == nil {
		return fmt.Errorf("%w: Get: nil client, device or output", cdevice.ErrInvalid)
	}
	ctx, cancel := context.WithCancel(ctx)
	fs, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		cancel()
		return err
	}
	rdr, err := flight.NewRecordReader(fs)
	if err != nil {
		cancel()
		return err
	}
	cr := &cancelReader{Reader: rdr, cancel: cancel}
	cr.refs.Store(1)
	// out holds its own reference to cr until the consumer releases it
	// (also when it read nothing); our release of cr is the last only when
	// the export failed.
	err = exportLanded(ctx, cr, dev, out)
	cr.Release()
	return err
}

// exportLanded exports rdr as an ArrowDeviceArrayStream on dev into out:
// on the CPU rdr's batches themselves (cpuBatches), elsewhere copied to dev
// when the consumer asks for each. Either way out holds a reference to rdr
// until the consumer releases it. Get, DoPut and exportBatches land
// batches with it.
func exportLanded(ctx context.Context, rdr array.RecordReader, dev device.Device, out *abi.DeviceArrayStream) error {
	if dev.Type() != abi.DeviceCPU {
		return stream.ExportReaderToDevice(ctx, rdr, dev, out)
	}
	// The stream holds its own reference to rdr, dropped when the consumer
	// releases it: a get_next the consumer abandoned (its ctx done) may still
	// be reading rdr after the caller has let go of it.
	rdr.Retain()
	if err := stream.ExportDeviceStream(rdr.Schema(), abi.DeviceCPU, cpuBatches(ctx, rdr), out, stream.WithOnRelease(rdr.Release)); err != nil {
		rdr.Release()
		return err
	}
	return nil
}

// cpuBatches yields rdr's batches as CPU device batches without copying
// them (cdevice.CPURecordBatch retains each, so rdr may release its current
// batch on the next Next while the consumer still holds the previous one).
func cpuBatches(ctx context.Context, rdr array.RecordReader) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !rdr.Next() {
				break
			}
			b, err := cdevice.CPURecordBatch(rdr.RecordBatch())
			if !yield(b, err) || err != nil {
				return
			}
		}
		if err := rdr.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// cancelReader is a Flight reader whose last Release also ends the gRPC
// call, so that a consumer that stops early leaves nothing running.
type cancelReader struct {
	*flight.Reader
	cancel context.CancelFunc
	refs   atomic.Int64
}

func (r *cancelReader) Retain() { r.refs.Add(1); r.Reader.Retain() }

func (r *cancelReader) Release() {
	r.Reader.Release()
	if r.refs.Add(-1) == 0 {
		r.cancel()
	}
}

var _ array.RecordReader = (*cancelReader)(nil)

// Put imports the device stream in (taking ownership) and sends its
// batches, brought to the host, to the server's DoPut under desc. It returns
// once the server has acknowledged them, or with the first error of either
// side.
func Put(ctx context.Context, c flight.Client, desc *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
	if c == nil {
		cdevice.ReleaseDeviceArrayStream(in)
		return fmt.Errorf("%w: Put: nil client", cdevice.ErrInvalid)
	}
	rdr, err := stream.ImportDeviceStream(in)
	if err != nil {
		return err
	}
	defer rdr.Release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ps, err := c.DoPut(ctx)
	if err != nil {
		return err
	}
	if err := sendDevice(ctx, rdr, ps, desc); err != nil {
		if errors.Is(err, io.EOF) {
			// The server ended the call: its status is what Recv returns.
			if _, rerr := ps.Recv(); rerr != nil && rerr != io.EOF {
				return rerr
			}
		}
		return err
	}
	if err := ps.CloseSend(); err != nil {
		return err
	}
	for {
		if _, err := ps.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
