package async_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// unknownType is a data type with an id no format string has.
type unknownType struct{ arrow.NullType }

func (*unknownType) ID() arrow.Type { return arrow.Type(250) }

// idleHandler is a Handler that no producer drives; at the end of the
// test it is released as a producer would release it, and closed.
func idleHandler(t *testing.T) *async.Handler {
	t.Helper()
	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseHandler(h); acClose(t, h) })
	return h
}

// releaseHandler calls the handler's release, as its producer would.
func releaseHandler(h *async.Handler) {
	select {
	case <-h.Done():
	default:
		ffi.Call(h.C().Release, uintptr(unsafe.Pointer(h.C())))
	}
}

// goPair runs produce against a Handler and reads the handler to its end:
// the error produce returned and the one the handler's reader met (nil at
// a clean end).
func goPair(t *testing.T, produce func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error) (produced, read error) {
	ctx, h := acHandler(t)
	done := make(chan error, 1)
	go func() { done <- produce(ctx, h.C()) }()
	for {
		b, err := h.Next(ctx)
		if err != nil {
			if err != io.EOF {
				read = err
			}
			break
		}
		b.Release()
	}
	produced = <-done
	acClose(t, h)
	return produced, read
}

// hostile runs Produce against testdata/c/hostile.c's handler in mode.
func hostile(t *testing.T, mode int) error {
	hxLeakCheck(t)
	x := hxFn(t, "hx_handler_new")(uintptr(mode))
	defer hxFn(t, "hx_handler_free")(x)
	h := (*abi.AsyncDeviceStreamHandler)(abi.Pointer(hxFn(t, "hx_handler_struct")(x)))
	ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
	defer cancel()
	return async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, 6, 5, nil)), h)
}

// TestErrorPaths drives every exported function of the package into
// failure (handlers and producers that refuse, fail or lie, in Go and in
// C, bad arguments, contexts done) and checks that each error wraps its
// path's documented sentinel.
func TestErrorPaths(t *testing.T) {
	cases := []testsupport.ErrorCase{
		// The Handler, driven by the C producer or by none.
		testsupport.Case("Handler.Schema/unknown format", cdevice.ErrInvalid, func(t *testing.T) error {
			ctx, h := acHandler(t)
			acProduce(t, h, 5, 3, 1, -1, true)
			_, err := h.Schema(ctx)
			acWaitDone(t, h)
			acClose(t, h)
			return err
		}),
		testsupport.Case("Handler.Next/on_error", cdevice.ErrProducer, func(t *testing.T) error {
			ctx, h := acHandler(t)
			acProduce(t, h, 5, 3, 1, 0, false)
			_, err := h.Next(ctx)
			var pe *cdevice.ProducerError
			if !errors.As(err, &pe) {
				t.Errorf("%v is not a *ProducerError", err)
			}
			acWaitDone(t, h)
			acClose(t, h)
			return err
		}),
		testsupport.Case("Handler.Schema/released before a schema", cdevice.ErrProducer, func(t *testing.T) error {
			h := idleHandler(t)
			releaseHandler(h)
			_, err := h.Schema(context.Background())
			var pe *cdevice.ProducerError
			if !errors.As(err, &pe) {
				t.Errorf("%v is not a *ProducerError", err)
			}
			return err
		}),
		testsupport.Case("Handler.Schema/canceled", context.Canceled, func(t *testing.T) error {
			_, err := idleHandler(t).Schema(testsupport.CanceledContext())
			return err
		}),
		testsupport.Case("Handler.Next/canceled", context.Canceled, func(t *testing.T) error {
			_, err := idleHandler(t).Next(testsupport.CanceledContext())
			return err
		}),
		testsupport.Case("Handler.All/canceled", context.Canceled, func(t *testing.T) error {
			for _, err := range idleHandler(t).All(testsupport.CanceledContext()) {
				return err
			}
			return nil
		}),
		testsupport.Case("Handler.Close/canceled", context.Canceled, func(t *testing.T) error {
			return idleHandler(t).Close(testsupport.CanceledContext())
		}),
		testsupport.Case("NewHandler/nil struct", cdevice.ErrInvalid, func(t *testing.T) error {
			t.Cleanup(noLeaksAfter(t))
			h, err := async.NewHandler(async.WithHandlerStruct(nil))
			if h != nil {
				t.Errorf("NewHandler returned a handler with its error %v", err)
			}
			return err
		}),
		testsupport.Case("NewHandler/unreleased struct", cdevice.ErrInvalid, func(t *testing.T) error {
			// A live handler's struct: another NewHandler must not take it over.
			live := idleHandler(t)
			before := *live.C()
			t.Cleanup(noLeaksAfter(t))
			h, err := async.NewHandler(async.WithHandlerStruct(live.C()))
			if h != nil {
				t.Errorf("NewHandler returned a handler with its error %v", err)
			}
			if *live.C() != before {
				t.Errorf("the refused struct was changed: %+v, was %+v", *live.C(), before)
			}
			return err
		}),
		// Produce, driving a Handler or hostile.c's C handler.
		testsupport.Case("Produce/nil handler", cdevice.ErrInvalid, func(t *testing.T) error {
			return async.Produce(context.Background(), acSchema, abi.DeviceCPU, async.Batches(acSource(context.Background(), 1, 1, nil)), nil)
		}),
		testsupport.Case("Produce/nil schema", cdevice.ErrInvalid, func(t *testing.T) error {
			produced, read := goPair(t, func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error {
				return async.Produce(ctx, nil, abi.DeviceCPU, nil, h)
			})
			testsupport.WantError(t, "the handler's side", read, cdevice.ErrProducer)
			return produced
		}),
		testsupport.Case("Produce/unsupported type", cdevice.ErrUnsupported, func(t *testing.T) error {
			sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: &unknownType{}}}, nil)
			produced, read := goPair(t, func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error {
				return async.Produce(ctx, sc, abi.DeviceCPU, async.Batches(acSource(ctx, 1, 1, nil)), h)
			})
			testsupport.WantError(t, "the handler's side", read, cdevice.ErrProducer)
			return produced
		}),
		testsupport.Case("Produce/nil batch", cdevice.ErrInvalid, func(t *testing.T) error {
			produced, read := goPair(t, func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error {
				return async.Produce(ctx, acSchema, abi.DeviceCPU, func(yield func(async.Batch, error) bool) {
					yield(async.Batch{}, nil)
				}, h)
			})
			testsupport.WantError(t, "the handler's side", read, cdevice.ErrProducer)
			return produced
		}),
		testsupport.Case("Produce/canceled", context.Canceled, func(t *testing.T) error {
			produced, read := goPair(t, func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error {
				return async.Produce(testsupport.CanceledContext(), acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, 2, 2, nil)), h)
			})
			testsupport.WantError(t, "the handler's side", read, cdevice.ErrProducer)
			return produced
		}),
		testsupport.Case("Produce/on_schema refused", async.ErrConsumer, func(t *testing.T) error {
			return hostile(t, hxFailSchema)
		}),
		testsupport.Case("Produce/on_next_task refused", async.ErrConsumer, func(t *testing.T) error {
			return hostile(t, hxFailTask)
		}),
		testsupport.Case("Produce/request of 0", async.ErrConsumer, func(t *testing.T) error {
			err := hostile(t, hxBadRequest)
			var ce *async.ConsumerError
			if !errors.As(err, &ce) || ce.Callback != "request" {
				t.Errorf("%v is not a request *ConsumerError", err)
			}
			return err
		}),
		testsupport.Case("ProduceReader/nil reader", cdevice.ErrInvalid, func(t *testing.T) error {
			produced, read := goPair(t, func(ctx context.Context, h *abi.AsyncDeviceStreamHandler) error {
				return async.ProduceReader(ctx, nil, device.CPU, h)
			})
			testsupport.WantError(t, "the handler's side", read, cdevice.ErrProducer)
			return produced
		}),
	}
	testsupport.RunErrorCases(t, cases)
}
