package testsupport

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// leakTrace turns on cdevice.TraceLeaks for the whole test binary, so that
// a failed leak check names where each object still held was made.
var leakTrace = flag.Bool("cdevice.leaktrace", os.Getenv("CDEVICE_LEAK_TRACE") == "1",
	"record where every exported, imported and device object is made, and name them if the leak check fails (also CDEVICE_LEAK_TRACE=1)")

// Main is a test binary's TestMain: it runs the tests with identity
// imports off, so every round trip drives the full C import path (tests
// of identity imports turn them on, see ForEachIdentity), and then fails
// the binary if anything is still held: cdevice.LiveLeaks (exports,
// imports, device arrays and allocations, handles, C heap blocks, callback
// panics) or whatever a package's own checks report (a message; "" when
// nothing is held). With -cdevice.leaktrace (or CDEVICE_LEAK_TRACE=1) the
// failure names the stack that made each object still held.
func Main(m *testing.M, checks ...func() string) {
	identity.Set(false)
	flag.Parse()
	cdevice.TraceLeaks(*leakTrace)
	code := m.Run()
	cdevice.TrimMemoryCache() // cached blocks are not leaks, but give them back
	if code == 0 {
		if msg := settledLeaks(checks); msg != "" {
			fmt.Fprintf(os.Stderr, "leak check failed: %s\n", msg)
			code = 1
		}
	}
	os.Exit(code)
}

// settledLeaks says what is still held once finalizers of dropped arrow-go
// values have had their chance to run (Eventually); "" when nothing is.
func settledLeaks(checks []func() string) string {
	var msg string
	settle.Eventually(func() bool { msg = leakMessage(checks); return msg == "" })
	return msg
}

// leakMessage says what is held now: cdevice.LiveLeaks, with where each
// object was made when that was traced, and the package's own checks.
func leakMessage(checks []func() string) string {
	var msgs []string
	if l := cdevice.LiveLeaks(); !l.Zero() {
		msgs = append(msgs, l.String())
		if _, last := ffi.Panics(); last != "" {
			msgs = append(msgs, "last callback panic: "+last)
		}
		if sites := cdevice.LeakSites(); len(sites) > 0 {
			msgs = append(msgs, "still held:\n"+strings.Join(sites, "\n"))
		} else if !*leakTrace {
			msgs = append(msgs, "run with -cdevice.leaktrace (or CDEVICE_LEAK_TRACE=1) to see where each was made")
		}
	}
	for _, c := range checks {
		if m := c(); m != "" {
			msgs = append(msgs, m)
		}
	}
	return strings.Join(msgs, "; ")
}

// Need skips t, saying what it needs and why that is absent (err), unless
// CI is "true": CI installs what the suite needs, so nothing may skip there.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs %s: %v", what, err)
	}
	t.Skipf("needs %s: %v", what, err)
}
