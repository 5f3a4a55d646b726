package stream

import (
	"iter"

	"github.com/purearrow/cdevice"
)

// A puller turns a batch sequence into next/stop calls, like iter.Pull2, but
// runs the sequence on its own goroutine: iter.Pull2's coroutines may not be
// resumed from a thread that locking differs on, and C calls our get_next on
// locked threads (its own, through purego).
type puller struct {
	seq     iter.Seq2[*cdevice.DeviceRecordBatch, error]
	req     chan struct{}
	resp    chan pulled
	done    chan struct{}
	exited  chan struct{}
	started bool
	ended   bool
}

type pulled struct {
	b   *cdevice.DeviceRecordBatch
	err error
}

func newPuller(seq iter.Seq2[*cdevice.DeviceRecordBatch, error]) *puller {
	return &puller{seq: seq, req: make(chan struct{}, 1), resp: make(chan pulled), done: make(chan struct{}), exited: make(chan struct{})}
}

// run drives the sequence one element per request until it ends or stop.
func (p *puller) run() {
	defer close(p.exited)
	defer close(p.resp)
	select {
	case <-p.req:
	case <-p.done:
		return
	}
	p.seq(func(b *cdevice.DeviceRecordBatch, err error) bool {
		select {
		case p.resp <- pulled{b, err}:
		case <-p.done:
			if b != nil {
				b.Release()
			}
			return false
		}
		select {
		case <-p.req:
			return true
		case <-p.done:
			return false
		}
	})
}

// next returns the next element; ok is false once the sequence has ended.
// Calls are serialized by the exporter's lock.
func (p *puller) next() (b *cdevice.DeviceRecordBatch, err error, ok bool) {
	if p.ended {
		return nil, nil, false
	}
	if !p.started {
		p.started = true
		go p.run()
	}
	p.req <- struct{}{}
	r, ok := <-p.resp
	if !ok {
		p.ended = true
		return nil, nil, false
	}
	return r.b, r.err, true
}

// stop ends the sequence (its deferred cleanups run) and waits for it.
func (p *puller) stop() {
	close(p.done)
	if p.started {
		<-p.exited
	}
}
