package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/purearrow/cdevice/abi"
)

// cPeer is testdata/peer.c, compiled with gcc and loaded with purego (no
// cgo): a C producer and a C consumer of ArrowDeviceArrayStreams.
type cPeer struct {
	produce func(out *abi.DeviceArrayStream, batches, rows int64) int32
	consume func(in *abi.DeviceArrayStream, batches, rows, sum *int64, maxBatches int64, err *byte, errlen int64) int32
}

var (
	peerOnce sync.Once
	peer     *cPeer
	peerErr  error
)

// loadPeer builds and loads the C peer once per test binary. Without gcc
// the test is skipped, unless CI is "true", where that is a failure.
func loadPeer(t testing.TB) *cPeer {
	t.Helper()
	peerOnce.Do(func() {
		gcc, err := exec.LookPath("gcc")
		if err != nil {
			peerErr = fmt.Errorf("gcc not found: %w", err)
			return
		}
		so := filepath.Join(tmpDir, "peer.so")
		out, err := exec.Command(gcc, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", so, filepath.Join("testdata", "peer.c")).CombinedOutput()
		if err != nil {
			peerErr = fmt.Errorf("gcc: %v\n%s", err, out)
			return
		}
		lib, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			peerErr = err
			return
		}
		p := &cPeer{}
		purego.RegisterLibFunc(&p.produce, lib, "peer_produce")
		purego.RegisterLibFunc(&p.consume, lib, "peer_consume")
		peer = p
	})
	if peerErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("C peer: %v", peerErr)
		}
		t.Skipf("C peer: %v", peerErr)
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
