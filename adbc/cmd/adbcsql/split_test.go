package main

import (
	"reflect"
	"strings"
	"testing"
)

// Statements end at ; outside quotes, dollar quoting and comments; each
// keeps the line it starts on; a meta command is a line of its own; the
// last statement may go without ;.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []statement
	}{
		{"two on a line", "SELECT 1; SELECT 2;", []statement{{text: "SELECT 1", line: 1}, {text: "SELECT 2", line: 1}}},
		{"over lines", "SELECT\n  1\n;\nSELECT 2", []statement{{text: "SELECT\n  1", line: 1}, {text: "SELECT 2", line: 4}}},
		{"quotes", `SELECT 'a;b', "c;d", ` + "`e;f`" + `, 'it''s;'; SELECT 2;`,
			[]statement{{text: `SELECT 'a;b', "c;d", ` + "`e;f`" + `, 'it''s;'`, line: 1}, {text: "SELECT 2", line: 1}}},
		{"a string over lines", "SELECT 'a\n;b';", []statement{{text: "SELECT 'a\n;b'", line: 1}}},
		{"comments", "-- a; comment\nSELECT 1 /* ; */ ; /* a /* nested ; */ one; */ SELECT 2; -- end;",
			[]statement{{text: "SELECT 1 /* ; */", line: 2}, {text: "/* a /* nested ; */ one; */ SELECT 2", line: 2}}},
		{"dollar quoting", "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\nDO $body$ BEGIN PERFORM 1; END $body$;",
			[]statement{{text: "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql", line: 1}, {text: "DO $body$ BEGIN PERFORM 1; END $body$", line: 2}}},
		{"a parameter is no dollar quote", "SELECT $1; SELECT $2;", []statement{{text: "SELECT $1", line: 1}, {text: "SELECT $2", line: 1}}},
		{"meta commands", "\\dt\nSELECT 1;\n  \\d t\n", []statement{{text: `\dt`, line: 1, meta: true}, {text: "SELECT 1", line: 2}, {text: `\d t`, line: 3, meta: true}}},
		{"a backslash inside a statement", "SELECT\n\\x;", []statement{{text: "SELECT\n\\x", line: 1}}},
		{"empty statements", ";;\n ; -- x\n", nil},
	} {
		var sp splitter
		var got []statement
		for _, l := range strings.Split(c.in, "\n") {
			got = append(got, sp.feed(l)...)
		}
		if st, ok := sp.rest(); ok {
			got = append(got, st)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// The splitter says when no statement is under way (the prompt's first
// prompt), and reset drops one.
func TestSplitIdle(t *testing.T) {
	var sp splitter
	if !sp.idle() {
		t.Error("a new splitter is not idle")
	}
	sp.feed("SELECT 'a")
	if sp.idle() {
		t.Error("idle inside a string")
	}
	sp.reset()
	if !sp.idle() || len(sp.feed("SELECT 1;")) != 1 {
		t.Error("reset left something under way")
	}
}
