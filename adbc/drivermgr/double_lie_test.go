package drivermgr_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// (d) Lying result streams are held to the import checks of every stream:
// the reader ends with an error wrapping a documented cdevice sentinel
// (never a panic or a crash), after the batches that came before the lie;
// every array the driver made is released once, and the stream too.
func TestDoubleLyingStreams(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	lies := []struct {
		name string
		kind int
	}{
		{"root longer than its column", lieRootLonger},
		{"column longer than any buffer", lieChildHuge},
		{"wrong n_buffers", lieNBuffers},
		{"NULL data buffer", lieNullBuffer},
		{"more columns than the schema", lieNChildren},
		{"null_count over length", lieNullCount},
		{"nulls without a bitmap", lieNullsNoBitmap},
		{"negative length", lieNegativeLength},
		{"NULL child", lieChildNull},
		{"released child", lieChildReleased},
		{"negative offset", lieNegativeOffset},
		{"nulls in the batch's struct", lieRootNulls},
	}
	for _, l := range lies {
		for _, at := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s/at batch %d", l.name, at), func(t *testing.T) {
				start := settled(cdevice.LiveLeaks())
				d.reset()
				d.lie(l.kind, at)
				vals, err := lyingQuery(t, d, ctx, "rows 10")
				if want := seq(0, int64(4*at)); !slices.Equal(vals, want) {
					t.Errorf("read %v before the lie, want %v", vals, want)
				}
				testsupport.WantError(t, "the lying stream", err, cdevice.ErrInvalid)
				d.checkClean(t, "after the lying stream", start)
			})
		}
	}

	// A driver may answer ErrorFromArrayStream for a stream that has not
	// failed, with ADBC_STATUS_OK (adbc.h: "the ADBC status code, or
	// ADBC_STATUS_OK if there is no error"): that is no error of its own,
	// and the reader's error is the import's alone.
	t.Run("ErrorFromArrayStream says OK", func(t *testing.T) {
		start := settled(cdevice.LiveLeaks())
		d.reset()
		d.lie(lieNBuffers, 1)
		d.setErrorAlways(true)
		_, err := lyingQuery(t, d, ctx, "rows 10")
		testsupport.WantError(t, "the lying stream", err, cdevice.ErrInvalid)
		var e adbc.Error
		if errors.As(err, &e) && (e.Msg == "" || errors.Is(err, adbcerr.IO)) {
			t.Errorf("the import's error %q carries an adbc.Error the driver never made: %#v", err, e)
		}
		d.checkClean(t, "after the lying stream", start)
	})

	// get_next fails mid-stream: the driver's AdbcError, through
	// ErrorFromArrayStream, with its details, and the producer's error.
	t.Run("get_next fails", func(t *testing.T) {
		start := settled(cdevice.LiveLeaks())
		d.reset()
		d.lie(lieGetNextFail, 2)
		vals, err := lyingQuery(t, d, ctx, "rows 10")
		if !slices.Equal(vals, seq(0, 8)) {
			t.Errorf("read %v before the failure", vals)
		}
		e := wantStatus(t, "a failing get_next", err, adbc.StatusIO)
		if e.Msg != "double: the stream broke" || string(e.SqlState[:]) != "08006" || e.VendorCode != 0 {
			t.Errorf("the stream's error: %#v", e)
		}
		if msg := diffDetails(e.Details, []adbc.BinaryErrorDetail{
			{Name: "double.lie", Detail: []byte("get_next")}, {Name: "double.binary", Detail: []byte{0, 1, 2}},
		}); msg != "" {
			t.Error(msg)
		}
		testsupport.WantError(t, "a failing get_next", err, cdevice.ErrProducer)
		d.checkClean(t, "after the failing stream", start)
	})

	// The schema lies: ExecuteQuery fails, and the stream is released.
	for _, l := range []struct {
		name string
		kind int
	}{{"invalid format", lieBadSchema}, {"n_children without children", lieSchemaChildren}} {
		t.Run("schema/"+l.name, func(t *testing.T) {
			start := settled(cdevice.LiveLeaks())
			d.reset()
			d.lie(l.kind, 0)
			db, cn, st := d.session(t, nil)
			if err := st.SetSqlQuery("rows 3"); err != nil {
				t.Fatal(err)
			}
			var err error
			testsupport.NoPanic(t, "ExecuteQuery", func() {
				var r interface{ Release() }
				r, _, err = st.ExecuteQuery(ctx)
				if err == nil {
					r.Release()
				}
			})
			testsupport.WantError(t, "a lying schema", err, cdevice.ErrInvalid)
			closeAll(t, db, cn, st)
			d.checkClean(t, "after the lying schema", start)
		})
	}
}

// lyingQuery runs query on a fresh database of d and reads its result to
// the end, returning the values read and the reader's error.
func lyingQuery(t *testing.T, d *dbl, ctx context.Context, query string) (vals []int64, err error) {
	t.Helper()
	db, cn, st := d.session(t, nil)
	defer closeAll(t, db, cn, st)
	if err := st.SetSqlQuery(query); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testsupport.NoPanic(t, "reading the stream", func() { vals, _, err = readAll(r) })
	return vals, err
}
