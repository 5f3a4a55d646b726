package drivermgr_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// plantedChildEnv marks the child process of the planted-driver tests; its
// value is the driver name to load.
const plantedChildEnv = "CDEVICE_DRIVERMGR_PLANTED"

// plantedDriver is a driver named without a folder or extension, and the
// file the search for it looks for.
const plantedDriver = "cdevice_planted_driver"

func plantedFile() string {
	if runtime.GOOS == "windows" {
		return plantedDriver + ".dll"
	}
	return "lib" + plantedDriver + ".so"
}

// TestPlantedDriverChild is not a test: it is the fresh process (the
// loader's search list is read once, when a process starts) that
// loadPlanted starts, and does nothing otherwise.
func TestPlantedDriverChild(t *testing.T) {
	name := os.Getenv(plantedChildEnv)
	if name == "" {
		t.Skip("child process of the planted-driver tests")
	}
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{drivermgr.OptionDriver: name})
	if err == nil {
		db.Close()
	}
	var e adbc.Error
	errors.As(err, &e)
	fmt.Printf("PLANTED %d %v\n", e.Code, err)
}

// loadPlanted loads the planted driver by name in a child process started
// in dir with env, and returns the status it got and its error's text.
func loadPlanted(t *testing.T, dir string, env []string) (adbc.Status, string) {
	t.Helper()
	return loadDriverIn(t, dir, env, plantedDriver)
}

// loadDriverIn is loadPlanted of the driver option driver.
func loadDriverIn(t *testing.T, dir string, env []string, driver string) (adbc.Status, string) {
	t.Helper()
	cmd := selfexec.Command(append(env, plantedChildEnv+"="+driver, "ADBC_DRIVER_PATH=", "CONDA_PREFIX="),
		"-test.run=^TestPlantedDriverChild$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "PLANTED "); ok {
			code, msg, _ := strings.Cut(rest, " ")
			st, err := strconv.Atoi(code)
			if err != nil {
				t.Fatalf("child: status %q", code)
			}
			return adbc.Status(st), msg
		}
	}
	t.Fatalf("child printed no result:\n%s", out)
	return 0, ""
}

// A driver named without a folder, planted in the current directory and
// behind relative and empty entries of the search list, is not loaded: the
// driver is not found. In an absolute entry it is (and, being no ADBC
// driver, fails for its entry point).
func TestPlantedDriverIsNotLoaded(t *testing.T) {
	dir, env, marks := ctest.UnsafePlaces(t, plantedFile())
	st, msg := loadPlanted(t, dir, env)
	if loaded := ctest.Loaded(t, marks); len(loaded) > 0 {
		t.Errorf("loaded from the current directory or a relative entry of %s: %v", ctest.SearchList(), loaded)
	}
	if st != adbc.StatusNotFound && !strings.Contains(msg, "current directory") {
		t.Errorf("%v: %s; want NotFound, or a refusal that names the current directory", st, msg)
	}

	allowed := filepath.Join(t.TempDir(), "drivers")
	ctest.Plant(t, allowed, plantedFile())
	env = []string{ctest.PlantedMarks + "=" + marks,
		ctest.SearchList() + "=" + allowed + string(os.PathListSeparator) + os.Getenv(ctest.SearchList())}
	st, msg = loadPlanted(t, t.TempDir(), env)
	if loaded := ctest.Loaded(t, marks); len(loaded) != 1 || !strings.EqualFold(loaded[0], plantedFile()) {
		t.Errorf("from an absolute entry of %s: loaded %v (%v: %s)", ctest.SearchList(), loaded, st, msg)
	}
}

// A library path with a NUL byte in it (a TOML string may have one) is
// refused: C would read it cut at the NUL, a bare name that the search,
// through an empty entry of the search list, finds in the current
// directory, where the guard against that saw a path.
func TestPlantedDriverNULIsNotLoaded(t *testing.T) {
	dir, env, marks := ctest.UnsafePlaces(t, plantedFile())
	m := filepath.Join(t.TempDir(), "nulbyte.toml") // not nul.toml: Windows reads NUL.* as its null device
	body := "manifest_version = 1\n[Driver]\nshared = \"" + plantedFile() + "\\u0000\"\n"
	if err := os.WriteFile(m, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	st, msg := loadDriverIn(t, dir, env, m)
	if loaded := ctest.Loaded(t, marks); len(loaded) > 0 {
		t.Errorf("a library path with a NUL loaded %v", loaded)
	}
	if st == adbc.StatusOK || !strings.Contains(msg, "NUL") {
		t.Errorf("%v: %s; want a refusal naming the NUL byte", st, msg)
	}
}

// hostileTOMLEnv marks the child of TestHostileTOMLBounded; its value is
// the manifest to load.
const hostileTOMLEnv = "CDEVICE_DRIVERMGR_HOSTILE_TOML"

// TestHostileTOMLChild is not a test: it loads the manifest
// TestHostileTOMLBounded wrote, under the memory limit it set.
func TestHostileTOMLChild(t *testing.T) {
	path := os.Getenv(hostileTOMLEnv)
	if path == "" {
		t.Skip("child process of TestHostileTOMLBounded")
	}
	if err := selfexec.ApplyMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	_, err := drivermgr.Driver{}.NewDatabase(map[string]string{drivermgr.OptionDriver: path})
	fmt.Printf("HOSTILE %v\n", err)
	selfexec.ReportPeak()
}

// Manifests and profiles of 20 to 80 KB nested thousands deep (which took
// a gigabyte, or the whole process, in the TOML library) are refused at
// once in a child whose address space is limited, with Arrow's C manager's
// words for it, using little memory.
func TestHostileTOMLBounded(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"inline tables 5000 deep": "x = " + strings.Repeat("{a=", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"arrays 20000 deep":       "x = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"a dotted key of 20000":   "[Driver]\n" + strings.Repeat("a.", 20000) + "a = 1\n",
		// A string whose last character is its quote once hid the rest.
		"inline tables after a string ending in its quote": "a = \"\"\"x\"\"\"\"\nx = " + strings.Repeat("{a=", 10000) + "1" + strings.Repeat("}", 10000) + "\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".toml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := selfexec.Command([]string{hostileTOMLEnv + "=" + path}, "-test.run=^TestHostileTOMLChild$", "-test.count=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		peak, elapsed, err := selfexec.Bounded(cmd, 256<<20, time.Minute)
		t.Logf("%s (%d bytes): %v, peak RSS %.1f MiB", name, len(body), elapsed.Round(time.Millisecond), float64(peak)/(1<<20))
		if err != nil || !strings.Contains(out.String(), "exceeded maximum nested value depth of 256") {
			t.Errorf("%s: %v\n%s", name, err, out.String())
		}
		if peak > 64<<20 {
			t.Errorf("%s: peak RSS %d bytes, more than 64 MiB", name, peak)
		}
	}
}
