package adbctest

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// NothingHeldAfter notes the goroutines running now; the check it returns
// fails t unless, once everything is closed, no C memory, import or export
// is held and the goroutines are back to that count (settle.Eventually).
func NothingHeldAfter(t testing.TB) (check func(what string)) {
	before := runtime.NumGoroutine()
	return func(what string) {
		t.Helper()
		var l cdevice.Leaks
		var n int
		if !settle.Eventually(func() bool {
			l, n = cdevice.LiveLeaks(), runtime.NumGoroutine()
			return l.Zero() && n <= before
		}) {
			t.Errorf("after %s: %v held; %d goroutines, %d before", what, l, n, before)
		}
	}
}

// QueryInt is the integer in the first row and column of sql's result on
// c (an int64 column).
func QueryInt(ctx context.Context, c adbc.Connection, sql string) (int64, error) {
	st, err := c.NewStatement()
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		return 0, err
	}
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return 0, err
	}
	defer r.Release()
	if !r.Next() {
		return 0, fmt.Errorf("no row (%v)", r.Err())
	}
	return r.RecordBatch().Column(0).(*array.Int64).Value(0), nil
}
