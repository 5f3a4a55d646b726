package adbc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/adbc"
)

// ingestors runs a test against IngestStream and IngestStreamContext.
var ingestors = []struct {
	name string
	run  func(ctx context.Context, conn *fakeConn, opt adbc.IngestStreamOptions) (int64, error)
}{
	{"IngestStream", func(ctx context.Context, conn *fakeConn, opt adbc.IngestStreamOptions) (int64, error) {
		return adbc.IngestStream(ctx, conn, conn.reader, "tbl", adbc.OptionValueIngestModeCreateAppend, opt)
	}},
	{"IngestStreamContext", func(ctx context.Context, conn *fakeConn, opt adbc.IngestStreamOptions) (int64, error) {
		return adbc.IngestStreamContext(ctx, adbc.AsConnectionContext(conn), conn.reader, "tbl", adbc.OptionValueIngestModeCreateAppend, opt)
	}},
}

func TestIngestStreamSteps(t *testing.T) {
	for _, in := range ingestors {
		t.Run(in.name, func(t *testing.T) {
			c, db := newFakes()
			n, err := in.run(tagged("ing"), db.conn, adbc.IngestStreamOptions{
				Catalog:   "cat",
				DBSchema:  "sch",
				Temporary: true,
				Extra:     map[string]string{"z.opt": "1", "a.opt": "2"},
			})
			if err != nil || n != 7 {
				t.Fatalf("= %d, %v; want 7, nil", n, err)
			}
			expectLog(t, c,
				"NewStatement()",
				"SetOption(adbc.ingest.target_table, tbl)",
				"SetOption(adbc.ingest.mode, adbc.ingest.mode.create_append)",
				"BindStream(ing, true)",
				"SetOption(adbc.ingest.target_catalog, cat)",
				"SetOption(adbc.ingest.target_db_schema, sch)",
				"SetOption(adbc.ingest.temporary, true)",
				"SetOption(a.opt, 2)",
				"SetOption(z.opt, 1)",
				"ExecuteUpdate(ing)",
				"stmt.Close()",
			)

			// Without options, only the required steps run.
			if _, err := in.run(tagged("min"), db.conn, adbc.IngestStreamOptions{}); err != nil {
				t.Fatal(err)
			}
			expectLog(t, c,
				"NewStatement()",
				"SetOption(adbc.ingest.target_table, tbl)",
				"SetOption(adbc.ingest.mode, adbc.ingest.mode.create_append)",
				"BindStream(min, true)",
				"ExecuteUpdate(min)",
				"stmt.Close()",
			)
		})
	}
}

func TestIngestStreamErrors(t *testing.T) {
	boom := adbc.Error{Msg: "boom", Code: adbc.StatusInvalidState}
	opt := adbc.IngestStreamOptions{Catalog: "cat", DBSchema: "sch", Temporary: true, Extra: map[string]string{"k": "v"}}
	cases := []struct {
		fail   string // the fake call that fails
		onKey  string // for SetOption: the key it fails on
		prefix string // the error's message before the driver's
		closed bool   // whether the statement gets closed
	}{
		{fail: "NewStatement", prefix: "error during ingestion: NewStatement: "},
		{fail: "SetOption", onKey: adbc.OptionKeyIngestTargetTable, prefix: "error during ingestion: SetOption(target_table=tbl): ", closed: true},
		{fail: "SetOption", onKey: adbc.OptionKeyIngestMode, prefix: "error during ingestion: SetOption(mode=adbc.ingest.mode.create_append): ", closed: true},
		{fail: "BindStream", prefix: "error during ingestion: BindStream: ", closed: true},
		{fail: "SetOption", onKey: adbc.OptionValueIngestTargetCatalog, prefix: "error during ingestion: target_catalog=cat: ", closed: true},
		{fail: "SetOption", onKey: adbc.OptionValueIngestTargetDBSchema, prefix: "error during ingestion: target_db_schema=sch: ", closed: true},
		{fail: "SetOption", onKey: adbc.OptionValueIngestTemporary, prefix: "error during ingestion: temporary=true: ", closed: true},
		{fail: "SetOption", onKey: "k", prefix: "error during ingestion: SetOption(k=v): ", closed: true},
		{fail: "ExecuteUpdate", prefix: "error during ingestion: ExecuteUpdate: ", closed: true},
	}
	for _, in := range ingestors {
		for _, tc := range cases {
			c, db := newFakes()
			if tc.onKey != "" {
				c.fail[tc.fail+":"+tc.onKey] = boom
			} else {
				c.fail[tc.fail] = boom
			}
			n, err := in.run(tagged(""), db.conn, opt)
			if n != -1 {
				t.Errorf("%s, %s failing: n = %d, want -1", in.name, tc.prefix, n)
			}
			if err == nil || err.Error() != tc.prefix+boom.Error() {
				t.Errorf("%s: err = %v, want %q", in.name, err, tc.prefix+boom.Error())
			}
			if !errors.Is(err, adbc.ErrInvalidState) {
				t.Errorf("%s: %v does not wrap the driver's error", in.name, err)
			}
			var e adbc.Error
			if !errors.As(err, &e) || e.Msg != "boom" {
				t.Errorf("%s: errors.As(%v) = %+v", in.name, err, e)
			}
			if got := strings.HasSuffix(c.String(), "stmt.Close()"); got != tc.closed {
				t.Errorf("%s, %s: statement closed = %v, want %v:\n%s", in.name, tc.prefix, got, tc.closed, c)
			}
		}
	}
}

// As in arrow-adbc, an error from closing the statement does not fail an
// ingestion that has succeeded.
func TestIngestStreamIgnoresCloseError(t *testing.T) {
	for _, in := range ingestors {
		c, db := newFakes()
		c.fail["stmt.Close"] = errors.New("close failed")
		n, err := in.run(tagged(""), db.conn, adbc.IngestStreamOptions{})
		if n != 7 || err != nil {
			t.Errorf("%s = %d, %v; want 7, nil", in.name, n, err)
		}
	}
}
