package drivermgr_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// failure is what the double is told to fail a call with.
type failure struct {
	status   adbc.Status
	msg      string
	sqlstate string // 5 characters, or "" for none
	vendor   int32
	details  []adbc.BinaryErrorDetail // 1.1 details (then no vendor code)
}

// failureFor is the i-th case's failure of the k-th call of fn: every
// status in turn, details every other case (a 1.1 error with details
// keeps vendor_code ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA, so it has no
// vendor code of its own).
func failureFor(fn string, k, i int) failure {
	st := adbc.Status(1 + i%14)
	if fn == "DriverInit" && st == adbc.StatusNotImplemented {
		st = adbc.StatusUnauthorized // NotImplemented asks the manager to try 1.0.0
	}
	f := failure{status: st, msg: fmt.Sprintf("double: %s call %d fails (case %d)", fn, k, i),
		sqlstate: fmt.Sprintf("D%04d", i%10000), vendor: int32(1000 + i)}
	if i%2 == 0 {
		f.details = []adbc.BinaryErrorDetail{
			{Name: "double.function", Detail: []byte(fn)},
			{Name: "double.binary", Detail: []byte{0, 1, 2, 0, byte(k)}},
		}
	}
	return f
}

// (a) Every call failing in turn: for each function of the double that a
// day of work calls, and each of its calls, the day fails at that call
// with the double's error (status, message, SQLSTATE, vendor code or
// details; errors.Is matching the status), and nothing is left held on
// either side.
func TestDoubleEveryCallFails(t *testing.T) {
	d := newDouble(t)
	if err := workday(d); err != nil {
		t.Fatal(err)
	}
	names, failable := d.functions()
	counts := map[string]int{}
	for _, n := range names {
		counts[n] = int(d.calls(n))
	}
	d.reset()
	i := 0
	for _, fn := range names {
		if !failable[fn] {
			continue
		}
		for k := 1; k <= counts[fn]; k++ {
			i++
			f := failureFor(fn, k, i)
			t.Run(fmt.Sprintf("%s#%d", fn, k), func(t *testing.T) {
				start := settled(cdevice.LiveLeaks())
				d.reset()
				d.fail(t, fn, k, f)
				var err error
				testsupport.NoPanic(t, "the day of work", func() { err = workday(d) })
				if n := d.fired(); n != 1 {
					t.Errorf("the failure fired %d times (the day's error: %v)", n, err)
				}
				checkFailure(t, fn, err, f)
				d.checkClean(t, "after the day of work", start)
			})
		}
	}
	if i < 100 {
		t.Errorf("only %d calls failed in turn: is the day of work that short?", i)
	}
}

// checkFailure checks that err is the double's failure f of fn.
func checkFailure(t *testing.T, fn string, err error, f failure) {
	t.Helper()
	if err == nil {
		t.Fatal("the day of work succeeded")
	}
	if fn == "get_schema" {
		// The import fails in get_schema and releases the stream: the
		// error is the producer's, with get_last_error's message.
		testsupport.WantError(t, fn, err, cdevice.ErrProducer)
		if !strings.Contains(err.Error(), f.msg) {
			t.Errorf("%v does not carry the double's message %q", err, f.msg)
		}
		return
	}
	e := wantStatus(t, fn, err, f.status)
	if e.Msg != f.msg {
		t.Errorf("message %q, want %q", e.Msg, f.msg)
	}
	if string(e.SqlState[:]) != f.sqlstate {
		t.Errorf("SQLSTATE %q, want %q", e.SqlState, f.sqlstate)
	}
	wantVendor := f.vendor
	if len(f.details) > 0 {
		wantVendor = 0
	}
	if e.VendorCode != wantVendor {
		t.Errorf("vendor code %d, want %d", e.VendorCode, wantVendor)
	}
	if fn == "DriverInit" && len(e.Details) == 0 {
		// The entry point failed: no table to read details through.
	} else if msg := diffDetails(e.Details, f.details); msg != "" {
		t.Error(msg)
	}
	if fn == "get_next" {
		// The stream's failure: the driver's adbc.Error (ErrorFromArrayStream)
		// and cdevice's ProducerError both.
		testsupport.WantError(t, fn, err, cdevice.ErrProducer)
	}
}

// detailsReadable: purego takes the struct ErrorGetDetail returns by value
// on amd64 and arm64 only; elsewhere errors come without details.
var detailsReadable = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

func diffDetails(got []adbc.ErrorDetail, want []adbc.BinaryErrorDetail) string {
	if !detailsReadable {
		want = nil
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d details, want %d", len(got), len(want))
	}
	for i, g := range got {
		v, err := g.Serialize()
		if g.Key() != want[i].Name || err != nil || !slices.Equal(v, want[i].Detail) {
			return fmt.Sprintf("detail %d is %s=%q (%v), want %s=%q", i, g.Key(), v, err, want[i].Name, want[i].Detail)
		}
	}
	return ""
}

// Messages longer than any buffer come through whole; an empty one
// becomes the manager's, naming the call that failed.
func TestDoubleErrorMessages(t *testing.T) {
	d := newDouble(t)
	long := strings.Repeat("long message ", 100)
	for _, msg := range []string{long, ""} {
		d.reset()
		d.fail(t, "DatabaseInit", 1, failure{status: adbc.StatusIO, msg: msg})
		db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": d.path})
		if err == nil {
			db.Close()
		}
		e := wantStatus(t, "DatabaseInit", err, adbc.StatusIO)
		if msg != "" && e.Msg != msg {
			t.Errorf("message of %d bytes, want %d", len(e.Msg), len(msg))
		}
		if msg == "" && !strings.Contains(e.Msg, "AdbcDatabaseInit") {
			t.Errorf("an empty message became %q, which does not name the call", e.Msg)
		}
		if !errors.Is(err, adbcerr.IO) {
			t.Errorf("errors.Is(%v, ErrIO) is false", err)
		}
	}
}
