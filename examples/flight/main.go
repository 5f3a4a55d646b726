// Command flight moves ArrowDeviceArrayStreams between processes over Arrow
// Flight (real gRPC), without cgo: the server's DoGet serves a device stream
// brought to the host, the client lands each batch on its default device and
// hands the batches on as an ArrowDeviceArrayStream; DoPut goes the other
// way.
//
//	flight serve [-addr 127.0.0.1:8815] [-dir DIR]
//	flight get   [-addr 127.0.0.1:8815] TICKET
//	flight put   [-addr 127.0.0.1:8815] TICKET
//	flight demo  [-dir DIR]
//
// A ticket is gen:BATCHES:BYTES (one int64 column, BATCHES batches of about
// BYTES bytes) or the name of an Arrow IPC file in the server's -dir (for
// put: in the client's -dir). demo starts a server on loopback and runs get
// and put against it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/loader"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const defaultAddr = "127.0.0.1:8815"

// defaultDir is the Arrow integration gold files, seen from this directory
// of a checkout beside ../shared.
const defaultDir = "../../../shared/testdata/arrow-integration/cpp-21.0.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flight:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: flight serve|get|put|demo [flags] [TICKET]")

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", defaultAddr, "server address")
	dir := fs.String("dir", defaultDir, "directory of Arrow IPC files that tickets name")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	dev, why, err := loader.Default(ctx)
	if err != nil {
		return err
	}
	switch args[0] {
	case "serve":
		lis, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "serving on %s, device %s (%s)\n", lis.Addr(), dev.Name(), why)
		return serve(ctx, lis, *dir, dev, out)
	case "get", "put":
		if fs.NArg() != 1 {
			return errUsage
		}
		c, err := dial(*addr)
		if err != nil {
			return err
		}
		defer c.Close()
		if args[0] == "get" {
			return get(ctx, c, fs.Arg(0), dev, out)
		}
		return put(ctx, c, *dir, fs.Arg(0), dev, out)
	case "demo":
		return demo(ctx, *dir, dev, out)
	}
	return errUsage
}

// newServer is the example's service: tickets name files in dir or
// generated data, exported from dev; DoPut lands batches on dev and counts
// them.
func newServer(dir string, dev device.Device, out io.Writer) *Server {
	return &Server{
		Open: func(ctx context.Context, ticket []byte, cs *abi.DeviceArrayStream) error {
			sc, recs, err := load(dir, string(ticket))
			if err != nil {
				return err
			}
			// recs are Go memory: the garbage collector frees them
			// once the stream (which holds them) is gone.
			return exportBatches(ctx, sc, recs, dev, cs)
		},
		Device: dev,
		Consume: func(ctx context.Context, desc *flight.FlightDescriptor, in *abi.DeviceArrayStream) error {
			c, err := consumeCount(ctx, in)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "server: put %q: %d batches, %d rows on %s\n", desc.GetPath(), c.Batches, c.Rows, c.Device)
			return nil
		},
	}
}

func serve(ctx context.Context, lis net.Listener, dir string, dev device.Device, out io.Writer) error {
	gs := grpc.NewServer()
	flight.RegisterFlightServiceServer(gs, newServer(dir, dev, out))
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			gs.Stop()
		case <-done:
		}
	}()
	err := gs.Serve(lis)
	close(done)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func dial(addr string) (flight.Client, error) {
	return flight.NewClientWithMiddleware(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

func get(ctx context.Context, c flight.Client, ticket string, dev device.Device, out io.Writer) error {
	start := time.Now()
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := Get(ctx, c, []byte(ticket), dev, cs); err != nil {
		return err
	}
	n, err := consumeCount(ctx, cs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "get %s: %d batches, %d rows landed on %s in %v\n", ticket, n.Batches, n.Rows, n.Device, time.Since(start).Round(time.Millisecond))
	return nil
}

func put(ctx context.Context, c flight.Client, dir, ticket string, dev device.Device, out io.Writer) error {
	sc, recs, err := load(dir, ticket)
	if err != nil {
		return err
	}
	defer releaseAll(recs)
	cs := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(cs)
	if err := exportBatches(ctx, sc, recs, dev, cs); err != nil {
		return err
	}
	if err := Put(ctx, c, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{ticket}}, cs); err != nil {
		return err
	}
	fmt.Fprintf(out, "put %s: %d batches sent from %s\n", ticket, len(recs), dev.Name())
	return nil
}

// demo serves on a loopback port and runs get and put against it.
func demo(ctx context.Context, dir string, dev device.Device, out io.Writer) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serve(sctx, lis, dir, dev, out) }()
	err = demoClient(ctx, lis.Addr().String(), dir, dev, out)
	stop()
	if serr := <-served; err == nil {
		err = serr
	}
	return err
}

func demoClient(ctx context.Context, addr, dir string, dev device.Device, out io.Writer) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	tickets := []string{"gen:64:1048576"}
	if _, err := os.Stat(dir + "/generated_primitive.arrow_file"); err == nil {
		tickets = append(tickets, "generated_primitive.arrow_file")
	}
	for _, t := range tickets {
		if err := get(ctx, c, t, dev, out); err != nil {
			return err
		}
		if err := put(ctx, c, dir, t, dev, out); err != nil {
			return err
		}
	}
	return nil
}
