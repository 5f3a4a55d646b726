package main

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// cPeer is testdata/c/peer.c, compiled when the tests run (internal/testkit/ctest)
// and loaded with purego (no cgo): a C producer and a C consumer of
// ArrowDeviceArrayStreams.
type cPeer struct {
	produce func(out *abi.DeviceArrayStream, batches, rows int64) int32
	consume func(in *abi.DeviceArrayStream, batches, rows, sum *int64, maxBatches int64, err *byte, errlen int64) int32
}

var (
	peerOnce sync.Once
	peer     *cPeer
	peerErr  error
)

// loadPeer builds and loads the C peer once per test binary; without a C
// compiler the test is skipped (ctest.Library), unless CI is "true".
func loadPeer(t testing.TB) *cPeer {
	t.Helper()
	lib := ctest.Library(t, "peer")
	peerOnce.Do(func() {
		p := &cPeer{}
		for name, fn := range map[string]any{"peer_produce": &p.produce, "peer_consume": &p.consume} {
			sym, err := lib.Symbol(name)
			if err != nil {
				peerErr = err
				return
			}
			purego.RegisterFunc(fn, sym)
		}
		peer = p
	})
	if peerErr != nil {
		t.Fatalf("C peer: %v", peerErr)
	}
	return peer
}

// consumeC hands in to the C consumer, which reads at most maxBatches
// batches (-1: all), sums column x and releases everything.
func (p *cPeer) consumeC(in *abi.DeviceArrayStream, maxBatches int64) (batches, rows, sum int64, err error) {
	msg := make([]byte, 512)
	rc := p.consume(in, &batches, &rows, &sum, maxBatches, &msg[0], int64(len(msg)))
	if rc != 0 {
		n := 0
		for n < len(msg) && msg[n] != 0 {
			n++
		}
		return batches, rows, sum, fmt.Errorf("C consumer: rc %d: %s", rc, msg[:n])
	}
	return batches, rows, sum, nil
}
