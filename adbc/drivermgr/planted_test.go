package drivermgr_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/selfexec"
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
	cmd := selfexec.Command(append(env, plantedChildEnv+"="+plantedDriver, "ADBC_DRIVER_PATH=", "CONDA_PREFIX="),
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
