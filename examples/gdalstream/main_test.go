package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// cities is testdata/gdal/cities.csv from this directory.
var cities = filepath.Join("..", "..", "testdata", "gdal", "cities.csv")

// binDir holds the example built once for all tests; TestMain removes it.
var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gdalstream-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the example with CGO_ENABLED=0, as a user would (once,
// for all tests).
func build(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		skipOrFail(t, "the go command is not on PATH: %v", err)
	}
	buildOnce.Do(func() {
		bin := filepath.Join(binDir, "gdalstream")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		cmd := exec.Command(goTool, "build", "-o", bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// execute runs the example and returns its stdout, stderr and exit status.
func execute(t *testing.T, bin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		status = exit.ExitCode()
	default:
		t.Fatalf("running %s: %v", bin, err)
	}
	return out.String(), errOut.String(), status
}

// skipOrFail skips, or fails under CI=true, where everything must run.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// runGDAL runs the example, skipping (failing under CI=true) when it
// reports that GDAL cannot be loaded.
func runGDAL(t *testing.T, bin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	stdout, stderr, status = execute(t, bin, args...)
	if status == exitNoGDAL {
		first, _, _ := strings.Cut(stderr, "\n")
		skipOrFail(t, "libgdal is not installed (Debian: apt-get install libgdal32): %s", first)
	}
	return stdout, stderr, status
}

// The example reads the cities through GDAL's Arrow stream, in batches of
// four rows, and prints the typed schema and every row. Its exit status 0
// also says that cdevice.LiveLeaks found nothing held at the end.
func TestCities(t *testing.T) {
	bin := build(t)
	out, stderr, status := runGDAL(t, bin, "-batch-size", "4", cities)
	if status != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", status, out, stderr)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		`layer "cities"`, "(driver CSV)",
		"schema: 6 fields",
		"  name: utf8 (nullable)",
		"  country: utf8 (nullable)",
		"  population: int32 (nullable)",
		"  lat: float64 (nullable)",
		"  lon: float64 (nullable)",
		"ARROW:extension:name=ogc.wkb",
		"batch 1: 4 rows", "batch 2: 4 rows", "batch 3: 2 rows",
		"10 rows in 3 batches",
		"POINT (139.6917 35.6895)", // Tokyo's lon/lat made into a geometry
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Every city on its own line, with its population.
	lines := strings.Split(out, "\n")
	for _, c := range []struct{ name, population string }{
		{"Tokyo", "14094034"}, {"Delhi", "16787941"}, {"São Paulo", "11451245"},
		{"Mexico City", "9209944"}, {"Cairo", "10044894"}, {"Mumbai", "12442373"},
		{"Lagos", "15388000"}, {"Paris", "2102650"}, {"Zürich", "443037"},
		{"Reykjavík", "139875"},
	} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), c.name+" ") && strings.Contains(l, " "+c.population+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("no row for %s with population %s", c.name, c.population)
		}
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// -fid adds GDAL's feature id column; GDAL's default batch size puts all
// ten rows in one batch.
func TestCitiesFID(t *testing.T) {
	bin := build(t)
	out, stderr, status := runGDAL(t, bin, "-fid", cities)
	if status != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", status, out, stderr)
	}
	for _, want := range []string{"schema: 7 fields", "  OGC_FID: int64", "batch 1: 10 rows", "10 rows in 1 batch\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A file GDAL cannot open: exit status 1 and GDAL's own message.
func TestMissingFile(t *testing.T) {
	bin := build(t)
	missing := filepath.Join(t.TempDir(), "nope.csv")
	out, stderr, status := runGDAL(t, bin, missing)
	if status != exitError {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, exitError, out, stderr)
	}
	if !strings.Contains(stderr, "cannot open "+missing) || !strings.Contains(stderr, "No such file") {
		t.Errorf("stderr does not say why the file cannot be opened:\n%s", stderr)
	}
}

// Without GDAL the example says what to install, with exit status 3. This
// runs everywhere: -lib points at a library that does not exist.
func TestNoGDAL(t *testing.T) {
	bin := build(t)
	lib := filepath.Join(t.TempDir(), "libgdal-missing.so")
	out, stderr, status := execute(t, bin, "-lib", lib, cities)
	if status != exitNoGDAL {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, exitNoGDAL, out, stderr)
	}
	for _, want := range []string{"GDAL not found", "install libgdal32", lib} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if out != "" {
		t.Errorf("stdout: %s", out)
	}
}

// Bad usage: exit status 2 and the usage text.
func TestUsage(t *testing.T) {
	bin := build(t)
	_, stderr, status := execute(t, bin, "a.csv", "b.csv")
	if status != exitUsage || !strings.Contains(stderr, "usage: gdalstream") {
		t.Errorf("exit status %d, stderr:\n%s", status, stderr)
	}
}
