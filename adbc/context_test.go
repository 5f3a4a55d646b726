package adbc_test

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/purearrow/cdevice/adbc"
)

func TestAdaptersOfNil(t *testing.T) {
	if adbc.AsDatabaseContext(nil) != nil {
		t.Error("AsDatabaseContext(nil) != nil")
	}
	if adbc.AsConnectionContext(nil) != nil {
		t.Error("AsConnectionContext(nil) != nil")
	}
	if adbc.AsStatementContext(nil) != nil {
		t.Error("AsStatementContext(nil) != nil")
	}
}

// expectLog fails the test unless c holds exactly want, then clears it.
func expectLog(t *testing.T, c *calls, want ...string) {
	t.Helper()
	if len(c.log) != len(want) {
		t.Fatalf("calls:\n%s\nwant:\n%q", c, want)
	}
	for i := range want {
		if c.log[i] != want[i] {
			t.Errorf("call %d = %s, want %s", i, c.log[i], want[i])
		}
	}
	c.log = nil
}

func TestDatabaseAdapter(t *testing.T) {
	c, db := newFakes()
	adb := adbc.AsDatabaseContext(db)

	if err := adb.SetOptions(tagged("so"), map[string]string{"uri": "x"}); err != nil {
		t.Fatal(err)
	}
	expectLog(t, c, "SetOptions(map[uri:x])")

	conn, err := adb.Open(tagged("open"))
	if err != nil || conn == nil {
		t.Fatalf("Open = %v, %v", conn, err)
	}
	expectLog(t, c, "Open(open)")
	// The connection is the fake's, adapted.
	if err := conn.Commit(tagged("commit")); err != nil {
		t.Fatal(err)
	}
	expectLog(t, c, "Commit(commit)")

	if err := adb.Close(tagged("close")); err != nil {
		t.Fatal(err)
	}
	expectLog(t, c, "db.Close()")

	boom := errors.New("boom")
	c.fail["Open"], c.fail["SetOptions"], c.fail["db.Close"] = boom, boom, boom
	if conn, err := adb.Open(tagged("x")); conn != nil || err != boom {
		t.Errorf("failing Open = %v, %v; want nil, boom", conn, err)
	}
	if err := adb.SetOptions(tagged("x"), nil); err != boom {
		t.Errorf("failing SetOptions = %v", err)
	}
	if err := adb.Close(tagged("x")); err != boom {
		t.Errorf("failing Close = %v", err)
	}
}

func TestConnectionAdapter(t *testing.T) {
	c, db := newFakes()
	conn := adbc.AsConnectionContext(db.conn)
	cat, sch, tbl, typ := "cat", "sch", "tbl", "TABLE"

	r, err := conn.GetInfo(tagged("info"), []adbc.InfoCode{adbc.InfoDriverName})
	if err != nil || r != db.conn.reader {
		t.Errorf("GetInfo = %v, %v", r, err)
	}
	r, err = conn.GetObjects(tagged("objs"), adbc.ObjectDepthTables, &cat, &sch, &tbl, nil, []string{typ})
	if err != nil || r != db.conn.reader {
		t.Errorf("GetObjects = %v, %v", r, err)
	}
	s, err := conn.GetTableSchema(tagged("schema"), nil, &sch, tbl)
	if err != nil || s != testSchema {
		t.Errorf("GetTableSchema = %v, %v", s, err)
	}
	r, err = conn.GetTableTypes(tagged("types"))
	if err != nil || r != db.conn.reader {
		t.Errorf("GetTableTypes = %v, %v", r, err)
	}
	if err := conn.Commit(tagged("commit")); err != nil {
		t.Error(err)
	}
	if err := conn.Rollback(tagged("rollback")); err != nil {
		t.Error(err)
	}
	r, err = conn.ReadPartition(tagged("part"), []byte("p0"))
	if err != nil || r != db.conn.reader {
		t.Errorf("ReadPartition = %v, %v", r, err)
	}
	st, err := conn.NewStatement(tagged("new"))
	if err != nil || st == nil {
		t.Fatalf("NewStatement = %v, %v", st, err)
	}
	if err := st.SetSqlQuery(tagged("q"), "SELECT 1"); err != nil {
		t.Error(err)
	}
	if err := conn.Close(tagged("close")); err != nil {
		t.Error(err)
	}
	expectLog(t, c,
		"GetInfo(info, [DriverName])",
		"GetObjects(objs, 3, cat, sch, tbl, <nil>, [TABLE])",
		"GetTableSchema(schema, <nil>, sch, tbl)",
		"GetTableTypes(types)",
		"Commit(commit)",
		"Rollback(rollback)",
		"ReadPartition(part, p0)",
		"NewStatement()",
		"SetSqlQuery(SELECT 1)",
		"conn.Close()",
	)

	boom := errors.New("boom")
	for _, name := range []string{"GetInfo", "GetObjects", "GetTableSchema", "GetTableTypes", "Commit", "Rollback", "ReadPartition", "NewStatement", "conn.Close"} {
		c.fail[name] = boom
	}
	errs := map[string]error{}
	_, errs["GetInfo"] = conn.GetInfo(tagged(""), nil)
	_, errs["GetObjects"] = conn.GetObjects(tagged(""), adbc.ObjectDepthAll, &cat, &sch, &tbl, nil, nil)
	_, errs["GetTableSchema"] = conn.GetTableSchema(tagged(""), nil, &sch, tbl)
	_, errs["GetTableTypes"] = conn.GetTableTypes(tagged(""))
	errs["Commit"] = conn.Commit(tagged(""))
	errs["Rollback"] = conn.Rollback(tagged(""))
	_, errs["ReadPartition"] = conn.ReadPartition(tagged(""), nil)
	st, errs["NewStatement"] = conn.NewStatement(tagged(""))
	errs["Close"] = conn.Close(tagged(""))
	for name, err := range errs {
		if err != boom {
			t.Errorf("failing %s gave %v", name, err)
		}
	}
	if st != nil {
		t.Errorf("failing NewStatement gave statement %v", st)
	}
}

func TestStatementAdapter(t *testing.T) {
	c, db := newFakes()
	fs := db.conn.stmt
	st := adbc.AsStatementContext(fs)

	bld := array.NewRecordBuilder(memory.NewGoAllocator(), testSchema)
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	rec := bld.NewRecordBatch()
	bld.Release()
	defer rec.Release()

	check := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	check("SetOption", st.SetOption(tagged("so"), "k", "v"))
	check("SetSqlQuery", st.SetSqlQuery(tagged("q"), "SELECT 1"))
	check("SetSubstraitPlan", st.SetSubstraitPlan(tagged("plan"), []byte("plan")))
	s, err := st.GetParameterSchema(tagged("ps"))
	if err != nil || s != testSchema {
		t.Errorf("GetParameterSchema = %v, %v", s, err)
	}
	check("Prepare", st.Prepare(tagged("prep")))
	r, n, err := st.ExecuteQuery(tagged("eq"))
	if err != nil || r != fs.reader || n != 7 {
		t.Errorf("ExecuteQuery = %v, %d, %v", r, n, err)
	}
	n, err = st.ExecuteUpdate(tagged("eu"))
	if err != nil || n != 7 {
		t.Errorf("ExecuteUpdate = %d, %v", n, err)
	}
	s, parts, n, err := st.ExecutePartitions(tagged("ep"))
	if err != nil || s != testSchema || n != 7 || parts.NumPartitions != 1 || string(parts.PartitionIDs[0]) != "p0" {
		t.Errorf("ExecutePartitions = %v, %+v, %d, %v", s, parts, n, err)
	}
	check("Bind", st.Bind(tagged("bind"), rec))
	check("BindStream", st.BindStream(tagged("bs"), fs.reader))
	check("Close", st.Close(tagged("close")))
	expectLog(t, c,
		"SetOption(k, v)",
		"SetSqlQuery(SELECT 1)",
		"SetSubstraitPlan(plan)",
		"GetParameterSchema()",
		"Prepare(prep)",
		"ExecuteQuery(eq)",
		"ExecuteUpdate(eu)",
		"ExecutePartitions(ep)",
		"Bind(bind, 2)",
		"BindStream(bs, true)",
		"stmt.Close()",
	)

	boom := errors.New("boom")
	for _, name := range []string{"SetOption", "SetSqlQuery", "SetSubstraitPlan", "GetParameterSchema", "Prepare", "ExecuteQuery", "ExecuteUpdate", "ExecutePartitions", "Bind", "BindStream", "stmt.Close"} {
		c.fail[name] = boom
	}
	errs := map[string]error{
		"SetOption":        st.SetOption(tagged(""), "k", "v"),
		"SetSqlQuery":      st.SetSqlQuery(tagged(""), ""),
		"SetSubstraitPlan": st.SetSubstraitPlan(tagged(""), nil),
		"Prepare":          st.Prepare(tagged("")),
		"Bind":             st.Bind(tagged(""), rec),
		"BindStream":       st.BindStream(tagged(""), nil),
		"Close":            st.Close(tagged("")),
	}
	_, errs["GetParameterSchema"] = st.GetParameterSchema(tagged(""))
	_, _, errs["ExecuteQuery"] = st.ExecuteQuery(tagged(""))
	_, errs["ExecuteUpdate"] = st.ExecuteUpdate(tagged(""))
	_, _, _, errs["ExecutePartitions"] = st.ExecutePartitions(tagged(""))
	for name, err := range errs {
		if err != boom {
			t.Errorf("failing %s gave %v", name, err)
		}
	}
}

// The adapters add no optional interfaces of their own.
func TestAdaptersExposeOnlyTheirInterface(t *testing.T) {
	_, db := newFakes()
	var st any = adbc.AsStatementContext(db.conn.stmt)
	if _, ok := st.(adbc.StatementExecuteSchemaWithContext); ok {
		t.Error("statement adapter claims ExecuteSchema")
	}
	var conn any = adbc.AsConnectionContext(db.conn)
	if _, ok := conn.(adbc.ConnectionGetStatisticsWithContext); ok {
		t.Error("connection adapter claims GetStatistics")
	}
}
