package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/loader"
)

// checkWidth fails t for every line of out wider than textWidth columns.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > textWidth {
			t.Errorf("a line of %d columns:\n%s\nin\n%s", n, line, out)
		}
	}
}

// squeeze drops all white space: the text of s however it is wrapped.
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// Every line of the devices report fits a 100-column terminal, however
// long the library paths, versions, device names and reasons; the reasons
// are wrapped, not cut.
func TestDevicesTextFits(t *testing.T) {
	long := strings.Repeat("a-long-directory/", 20) + "libOpenCL.so.1"
	reason := "not installed: tried " + strings.Repeat("libcudart.so.13, ", 12) + long + " and " + strings.Repeat("x", 250)
	rep := &loader.Report{Backends: []loader.BackendReport{
		{Name: "cuda", Err: device.ErrNotFound, Reason: reason, Elapsed: 90 * time.Minute},
		{Name: "opencl", Library: long, Version: strings.Repeat("OpenCL 3.0 PoCL ", 10), Elapsed: time.Millisecond,
			Devices: []loader.DeviceReport{{Type: abi.DeviceOpenCL, ID: 12, Name: strings.Repeat("pthread-skylake ", 10), TotalMemory: 1 << 40}}},
	}}
	var out bytes.Buffer
	printDevices(&out, rep, device.CPU, "no GPU: cuda: "+reason, nil)
	checkWidth(t, out.String())
	for _, want := range []string{"cuda: " + reason, "default: cpu (no GPU: cuda: " + reason + ")"} {
		if !strings.Contains(squeeze(out.String()), squeeze(want)) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	for _, want := range []string{"not found", "…y/a-long-directory/libOpenCL.so.1", "OpenCL 3.0 PoCL Ope…", "opencl:12", "1024.0 GiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	printDevices(&out, rep, nil, "", errors.New(reason))
	checkWidth(t, out.String())
	if !strings.Contains(squeeze(out.String()), squeeze("default: none: "+reason)) {
		t.Errorf("the report lacks the default's error:\n%s", out.String())
	}
}

// The libraries a backend loaded and passed over are listed with why, in
// text and JSON.
func TestDevicesSkipped(t *testing.T) {
	skip := "/usr/lib/libcudart.so.13: driver too old: it supports CUDA 12.9, the runtime is CUDA 13.0"
	rep := &loader.Report{Backends: []loader.BackendReport{{Name: "cuda", Library: "libcudart.so.12", Version: "runtime 12.8, driver 12.9",
		Skipped: []string{skip}, Devices: []loader.DeviceReport{{Type: abi.DeviceCUDA, Name: "GPU"}}}}}
	var out bytes.Buffer
	printDevices(&out, rep, device.CPU, "", nil)
	checkWidth(t, out.String())
	if !strings.Contains(squeeze(out.String()), squeeze("cuda: skipped "+skip)) {
		t.Errorf("the report lacks the skipped library:\n%s", out.String())
	}
}

// The same with a real reason: a runtime library path longer than a line.
func TestDevicesLongReason(t *testing.T) {
	long := "CDEVICE_CUDA_LIBRARY=/" + strings.Repeat("a-long-directory/", 20) + "libcudart.so"
	r := runCommand(t, []string{long}, "devices")
	checkWidth(t, r.stdout)
	if !strings.Contains(squeeze(r.stdout), squeeze(long)) {
		t.Errorf("the report lacks the library path:\n%s", r.stdout)
	}
	for _, b := range runJSON(t, long).Backends {
		if b.Name == "cuda" && !strings.Contains(b.Reason, strings.TrimPrefix(long, "CDEVICE_CUDA_LIBRARY=")) {
			t.Errorf("--json: cuda's reason %q lacks the whole path", b.Reason)
		}
	}
}

// goModVersion reads the version of module path that go.mod requires.
func goModVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(path) + `\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("go.mod does not require %s", path)
	}
	return string(m[1])
}

func TestVersion(t *testing.T) {
	purego, arrow := goModVersion(t, puregoPath), goModVersion(t, arrowPath)
	r := runCommand(t, nil, "version")
	for _, want := range []string{"cdevice ", "go        " + runtime.Version(), "purego    " + purego, "arrow-go  " + arrow} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, output lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	var rep versionReport
	decode(t, runCommand(t, nil, "version", "--json"), &rep)
	if rep.Version == "" || rep.Version == "unknown" || rep.Go != runtime.Version() || rep.Purego != purego || rep.ArrowGo != arrow {
		t.Errorf("version --json: %+v; want go %s, purego %s, arrow-go %s", rep, runtime.Version(), purego, arrow)
	}
}

// cdevice devices, started in a folder where a library that runs code as
// it is loaded (testdata/c/planted.c) is planted under every runtime's
// name, there and behind relative and empty entries of the search list,
// loads none of them and still answers.
func TestDevicesLoadsNothingPlanted(t *testing.T) {
	dir, env, marks := ctest.UnsafePlaces(t, ctest.RuntimeNames()...)
	env = append(env, "CDEVICE_CUDA_LIBRARY=", "CDEVICE_CUDA_DRIVER_LIBRARY=", "CDEVICE_HIP_LIBRARY=", "CDEVICE_OPENCL_LIBRARY=",
		"CUDA_PATH=", "HIP_PATH=", "ROCM_PATH=")
	r := runCommandIn(t, dir, env, "devices", "--json")
	if r.code != 0 {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Default string `json:"default"`
	}
	if decode(t, r, &rep); rep.Default == "" {
		t.Errorf("no default device:\n%s", r.stdout)
	}
	if loaded := ctest.Loaded(t, marks); len(loaded) > 0 {
		t.Errorf("loaded from the current directory or a relative entry of %s: %v", ctest.SearchList(), loaded)
	}
}
