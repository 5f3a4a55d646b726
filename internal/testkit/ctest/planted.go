package ctest

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// PlantedMarks names the environment variable that tells a planted
// library (testdata/c/planted.c) which folder to leave its mark in when it
// is loaded: a file "<its file name>.loaded".
const PlantedMarks = "CDEVICE_PLANTED_MARKS"

// RuntimeNames are the file names under which the device runtimes are
// looked for without a folder on this platform (device/cuda, device/hip,
// device/opencl): the names an attacker would plant.
func RuntimeNames() []string {
	if runtime.GOOS == "windows" {
		return []string{"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll", "nvcuda.dll",
			"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll", "OpenCL.dll"}
	}
	return []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", "libcuda.so.1", "libcuda.so",
		"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", "libOpenCL.so.1", "libOpenCL.so"}
}

// Plant copies the planted library into dir (made where missing) under
// each of names. Build it (Plant does) before a test changes its working
// directory: the sources are found from there.
func Plant(t testing.TB, dir string, names ...string) {
	t.Helper()
	lib, err := os.ReadFile(Path(t, "planted"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), lib, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Loaded lists, sorted, the file names of the planted copies whose marks
// are in the folder marks: the ones that were loaded (in lower case on
// Windows, whose file names are in any case).
func Loaded(t testing.TB, marks string) []string {
	t.Helper()
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".loaded"); ok {
			if runtime.GOOS == "windows" { // file names in any case
				n = strings.ToLower(n)
			}
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// SearchList is the variable of folders the platform searches for a
// library named without a folder: PATH on Windows, the dynamic loader's
// LD_LIBRARY_PATH (DYLD_LIBRARY_PATH on macOS) elsewhere.
func SearchList() string {
	switch runtime.GOOS {
	case "windows":
		return "PATH"
	case "darwin":
		return "DYLD_LIBRARY_PATH"
	}
	return "LD_LIBRARY_PATH"
}

// UnsafePlaces plants names where no library search may reach: in a new
// folder, to be a child process's working directory, and in rel beneath it,
// which a relative entry of SearchList names, as empty entries name the
// folder itself. It returns the folder, the environment for a child
// started there (SearchList with those entries before its own, and
// PlantedMarks) and the folder of marks.
func UnsafePlaces(t testing.TB, names ...string) (dir string, env []string, marks string) {
	t.Helper()
	root := t.TempDir()
	dir, marks = filepath.Join(root, "here"), filepath.Join(root, "marks")
	Plant(t, dir, names...)
	Plant(t, filepath.Join(dir, "rel"), names...)
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	list := strings.Join([]string{"", "rel", ".", "", os.Getenv(SearchList())}, string(os.PathListSeparator))
	return dir, []string{SearchList() + "=" + list, PlantedMarks + "=" + marks}, marks
}

// PlantSystem32 puts the planted library into Windows' System32 under
// names (in place of a file of that name in any case: Wine's stubs), and
// puts back what was there when the test ends. Where System32 cannot be
// written (Windows without administrator rights) the test is skipped,
// except when CI is "true".
func PlantSystem32(t testing.TB, names ...string) {
	t.Helper()
	sys := filepath.Join(os.Getenv("SystemRoot"), "System32")
	entries, err := os.ReadDir(sys)
	if err != nil {
		t.Fatalf("System32: %v", err)
	}
	for _, n := range names {
		for _, e := range entries {
			if strings.EqualFold(e.Name(), n) {
				n = e.Name()
			}
		}
		path := filepath.Join(sys, n)
		old, err := os.ReadFile(path)
		existed := err == nil
		lib, err := os.ReadFile(Path(t, "planted"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, lib, 0o755); err != nil {
			if os.Getenv("CI") != "true" {
				t.Skipf("System32 cannot be written here (administrator rights): %v", err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if existed {
				err = os.WriteFile(path, old, 0o755)
			} else {
				err = os.Remove(path)
			}
			if err != nil {
				t.Errorf("putting back %s: %v", path, err)
			}
		})
	}
}
