package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scenario on every backend this machine has, through every route:
// each answers the same rows. Flight SQL always runs (its server is in
// this process); the others need Arrow's drivers (../../../shared/adbc or
// $ADBC_SHARED), $ADBC_POSTGRESQL_URI and $DUCKDB_LIB, and are failures
// under CI=true where absent.
func TestEcosystem(t *testing.T) {
	c := config{postgresql: os.Getenv("ADBC_POSTGRESQL_URI"), duckdb: os.Getenv("DUCKDB_LIB")}
	dir := os.Getenv("ADBC_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "adbc")
	}
	if _, err := os.Stat(filepath.Join(dir, "libadbc_driver_sqlite.so")); err == nil {
		c.adbcDir, _ = filepath.Abs(dir)
	}
	want := []string{"flightsql"}
	for name, have := range map[string]bool{"sqlite": c.adbcDir != "", "postgresql": c.adbcDir != "" && c.postgresql != "", "duckdb": c.duckdb != ""} {
		switch {
		case have:
			want = append(want, name)
		case os.Getenv("CI") == "true":
			t.Errorf("needs %s here (Arrow's drivers in %s, $ADBC_POSTGRESQL_URI, $DUCKDB_LIB)", name, dir)
		default:
			t.Logf("%s not run: not configured here", name)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want)*len(routes) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want)*len(routes), out.String())
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, ": 1 one, 2 two, 3 three") {
			t.Errorf("%s", l)
		}
	}
	t.Log("\n" + out.String())
}
