package cdatatest

import (
	"errors"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// scenario is one of arrow-go's cdata test functions, rewritten.
type scenario struct {
	name string
	run  func(t *testing.T, s *suite)
}

type suite struct {
	api API
	p   *peer
}

// Run runs every scenario against api, each as a subtest named after the
// arrow-go test it re-implements (without the Test prefix).
func Run(t *testing.T, api API) {
	p := loadPeer(t)
	s := &suite{api: api, p: p}
	for _, group := range [][]scenario{schemaScenarios, arrayScenarios, headerScenarios, exportScenarios, streamScenarios, asyncScenarios} {
		for _, sc := range group {
			t.Run(sc.name, func(t *testing.T) { sc.run(t, s) })
		}
	}
}

// wantError fails t unless err is an error wrapping each of the targets.
func wantError(t testing.TB, what string, err error, targets ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Errorf("%s: error %q does not wrap %v", what, err, target)
		}
	}
}

// wantErrorContaining fails t unless err's text contains msg.
func wantErrorContaining(t testing.TB, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, msg)
	} else if !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error %q does not contain %q", what, err, msg)
	}
}

func noError(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// catch runs f and returns what it panicked with (nil if it returned).
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// wantSettled fails t unless tk's tree is freed except for roots root
// structs (freed at cleanup) and release ran releases times, waiting for
// finalizers (settle.Eventually) when wait is set.
func wantSettled(t testing.TB, tk *token, roots, releases int, wait bool) {
	t.Helper()
	var live, rel int
	settled := func() bool { live, rel = tk.live(t), tk.releases(t); return live == roots && rel == releases }
	if !settled() && (!wait || !settle.Eventually(settled)) {
		t.Errorf("C producer: %d allocations live, %d releases ran; want %d and %d", live, rel, roots, releases)
	}
}

// wantSchemaReleased fails t unless the schema (its root in sc, every node
// produced under tk) was released, each node once, and freed.
func wantSchemaReleased(t testing.TB, tk *token, sc *abi.Schema, nodes int) {
	t.Helper()
	if !sc.Released() {
		t.Errorf("the schema was not released")
	}
	wantSettled(t, tk, 1, nodes, false)
}

// cString reads a NUL-terminated C string at p ("<nil>" for 0).
func cString(p uintptr) string {
	if p == 0 {
		return "<nil>"
	}
	return ffi.GoString(p)
}
