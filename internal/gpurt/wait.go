package gpurt

import (
	"context"
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/hostwait"
)

// waitEvent waits for the event behind syncEvent (0: nothing to wait for):
// on the host when stream is nil, until done or ctx is done (polling then,
// since EventSynchronize cannot be interrupted), else on the stream
// *stream.
func (d *Device) waitEvent(ctx context.Context, syncEvent uintptr, stream *uintptr) error {
	if syncEvent == 0 {
		return nil
	}
	ev := *(*uintptr)(abi.Pointer(syncEvent))
	if ev == 0 {
		return fmt.Errorf("%w: sync_event %#x points to a NULL event", device.ErrInvalid, syncEvent)
	}
	g := d.g
	if stream != nil {
		return g.on(func() error { return g.r.Call(StreamWaitEvent, *stream, ev, 0) })
	}
	var m *marker
	defer func() {
		if m != nil {
			g.on(m.close) // the wait's answer stands; a failed destroy leaks only the marker
		}
	}()
	return hostwait.Until(ctx, func() (ready bool, err error) {
		err = g.on(func() (err error) {
			if m != nil {
				ready, err = g.r.Ready(EventQuery, m.ev)
				return err
			}
			ready, err = g.r.Ready(EventQuery, ev)
			if ready || err != nil || !g.unrecordedBusy {
				return err
			}
			m, err = g.newMarker(ev)
			return err
		})
		return ready, err
	}, func() error { return g.on(func() error { return g.r.Call(EventSynchronize, ev) }) })
}

// A marker is an event of our own, recorded on a stream of our own after
// that stream was made to wait for another event: it completes when that
// event does, and, unlike the event itself, it has certainly been recorded.
// Polls go to the marker on a runtime whose EventQuery answers NotReady for
// an event never recorded (chipStar; CUDA and HIP document success), where
// polling a producer's event that was never recorded would never end,
// while the wait of a stream on it is over at once on every runtime.
type marker struct {
	g          *gpu
	stream, ev uintptr
}

// newMarker makes the marker of ev. The GPU must be current.
func (g *gpu) newMarker(ev uintptr) (*marker, error) {
	r := g.r
	stream, err := r.newStream()
	if err != nil {
		return nil, err
	}
	m := &marker{g: g, stream: stream}
	err = r.Call(StreamWaitEvent, m.stream, ev, 0)
	var mev uintptr
	if err == nil {
		mev, err = r.newEvent()
	}
	if err == nil {
		m.ev = mev
		err = r.Call(EventRecord, m.ev, m.stream)
	}
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// close destroys the marker's event and stream; the stream's wait, if the
// event is still running, is the runtime's to finish. The GPU must be
// current.
func (m *marker) close() error {
	r := m.g.r
	var err error
	if m.ev != 0 {
		err = r.destroy(EventDestroy, m.ev)
	}
	if derr := r.destroy(StreamDestroy, m.stream); err == nil {
		err = derr
	}
	return err
}

// probeUnrecorded reads how the runtime answers EventQuery on an event
// never recorded (see marker). The GPU must be current.
func (g *gpu) probeUnrecorded() error {
	r := g.r
	ev, err := r.newEvent()
	if err != nil {
		return err
	}
	ready, err := r.Ready(EventQuery, ev)
	g.unrecordedBusy = !ready
	if derr := r.destroy(EventDestroy, ev); err == nil {
		err = derr
	}
	return err
}
