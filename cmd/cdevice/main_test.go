package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The tests run the command as a user would, as a child process: this test
// binary, which is the cdevice command when mainEnv is set (one build for
// tests and child, with go test's flags, for any GOARCH).
const mainEnv = "CDEVICE_TEST_MAIN"

// TestMain runs the command when it is the child, else the tests, then
// fails the binary if anything is still held across the C boundary.
func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		if err := selfexec.ApplyMemoryLimit(); err != nil {
			panic(err)
		}
		selfexec.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) // main, telling its peak memory

	}
	testsupport.Main(m)
}

// A result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// runCommand runs the command with args and extra environment, as a user
// would, and returns what it printed and its exit status.
func runCommand(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runCommandIn(t, "", env, args...)
}

// runCommandIn is runCommand started in the folder dir ("": this
// process's working directory).
func runCommandIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	for try := 1; ; try++ {
		cmd := selfexec.Command(append([]string{mainEnv + "=1"}, env...), args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil || errors.As(err, &exit):
			return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
		case cmd.Process == nil && try < 3:
			// The child never started: Wine's CreateProcess fails now and
			// then under load ("Internal error"), which is not the
			// command's doing.
			t.Logf("cdevice %v did not start (%v): again", args, err)
		default:
			t.Fatalf("cdevice %v: %v", args, err)
		}
	}
}

// decode parses r's stdout as JSON into v.
func decode(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
}

// nothingInstalled is the environment of a machine without any runtime.
var nothingInstalled = []string{"CDEVICE_CUDA_LIBRARY=/nonexistent", "CDEVICE_HIP_LIBRARY=/nonexistent", "CDEVICE_OPENCL_LIBRARY=/nonexistent"}

// availableDevices returns the device specs 'cdevice devices --json' lists,
// the CPU first.
func availableDevices(t *testing.T, env ...string) []string {
	t.Helper()
	r := runJSON(t, env...)
	specs := []string{"cpu"}
	for _, b := range r.Backends {
		for _, d := range b.Devices {
			specs = append(specs, d.Type+":"+strconv.FormatInt(d.ID, 10))
		}
	}
	return specs
}

type report struct {
	Backends []struct {
		Name      string `json:"name"`
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
		Version   string `json:"version"`
		Note      string `json:"note"`
		Devices   []struct {
			Type string `json:"type"`
			ID   int64  `json:"id"`
		} `json:"devices"`
	} `json:"backends"`
	Default       string `json:"default"`
	DefaultReason string `json:"default_reason"`
}

func runJSON(t *testing.T, env ...string) report {
	t.Helper()
	res := runCommand(t, env, "devices", "--json")
	if res.code != 0 {
		t.Fatalf("cdevice devices --json: exit %d\n%s", res.code, res.stderr)
	}
	var r report
	decode(t, res, &r)
	return r
}

func TestDevicesJSON(t *testing.T) {
	r := runJSON(t)
	names := map[string]bool{}
	for _, b := range r.Backends {
		names[b.Name] = true
		if !b.Available && b.Reason == "" {
			t.Errorf("backend %s unavailable without a reason", b.Name)
		}
	}
	for _, want := range []string{"cuda", "hip", "opencl"} {
		if !names[want] {
			t.Errorf("backend %s missing from the report", want)
		}
	}
	if r.Default == "" || r.DefaultReason == "" {
		t.Errorf("default %q, reason %q", r.Default, r.DefaultReason)
	}

	// Nothing installed: every backend says why, and the default is the CPU.
	none := runJSON(t, nothingInstalled...)
	for _, b := range none.Backends {
		if b.Available || !strings.Contains(b.Reason, "/nonexistent") {
			t.Errorf("%s with nothing installed: available=%v reason %q", b.Name, b.Available, b.Reason)
		}
	}
	if none.Default != "cpu" || !strings.Contains(none.DefaultReason, "no GPU") {
		t.Errorf("nothing installed: default %q (%s)", none.Default, none.DefaultReason)
	}
}

// HIP for real (Debian's libamdhip64 found by the usual search, on a
// machine without an AMD GPU): discovery finds the library, reports
// hipErrorNoDevice (100), and with CUDA and OpenCL out of the way the
// default falls back to the CPU, saying why. It needs that library and no
// AMD GPU, and searches for itself whatever CDEVICE_HIP_LIBRARY says.
func TestHIPNoDeviceFallsBackToCPU(t *testing.T) {
	r := runJSON(t, "CDEVICE_CUDA_LIBRARY=/nonexistent", "CDEVICE_OPENCL_LIBRARY=/nonexistent", "CDEVICE_HIP_LIBRARY=")
	for _, b := range r.Backends {
		if b.Name != "hip" {
			continue
		}
		if b.Available {
			t.Skipf("this machine has a HIP device (%s): the test needs one without", b.Version)
		}
		if !strings.Contains(b.Reason, "hipErrorNoDevice, 100") {
			if strings.Contains(b.Reason, "not installed") && os.Getenv("CI") != "true" {
				t.Skipf("libamdhip64 is not installed: %s", b.Reason)
			}
			t.Fatalf("hip: available=%v reason %q, want no device (100)", b.Available, b.Reason)
		}
	}
	if r.Default != "cpu" || !strings.Contains(r.DefaultReason, "hipErrorNoDevice, 100") {
		t.Errorf("default %q (%s), want cpu because hip has no device", r.Default, r.DefaultReason)
	}
}

// A HIP device that is the host's own CPU (chipStar on PoCL, here its test
// double, testdata/c/fakehip_chipstar.c) is no default GPU: the default is
// the CPU device, and the reason names the HIP device and how to pick it,
// which works. A GPU behind the same runtime is the default.
func TestHIPOnHostCPUIsNotDefault(t *testing.T) {
	env := []string{"CDEVICE_CUDA_LIBRARY=/nonexistent", "CDEVICE_OPENCL_LIBRARY=/nonexistent",
		"CDEVICE_HIP_LIBRARY=" + ctest.Path(t, "fakehip_chipstar"), "FAKE_CUDA_DEVICES=1"}
	r := runJSON(t, env...)
	want := "hip: only the host's CPU (rocm:0, rocm_host:0: slower than the CPU device; CDEVICE_DEVICE=rocm:0 picks it)"
	if r.Default != "cpu" || !strings.Contains(r.DefaultReason, want) {
		t.Errorf("default %q (%s); want cpu, saying %q", r.Default, r.DefaultReason, want)
	}
	checkSelftest(t, runCommand(t, append(env, "CDEVICE_DEVICE=rocm:0"), "selftest", "--json"), []string{"rocm:0"})
}

func TestDevicesText(t *testing.T) {
	r := runCommand(t, nil, "devices")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"BACKEND", "cuda", "hip", "opencl", "DEVICE", "cpu", "default: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"devices", "--bogus"}, {"devices", "extra"},
		{"selftest", "--bogus"}, {"selftest", "--device", "gpu"}, {"selftest", "--device", "opencl:-1"}, {"selftest", "cpu"},
		{"bench", "--size", "lots"}, {"bench", "--size", "4"}, {"bench", "--device", "cpu:0"}, {"bench", "--size"},
		{"inspect"}, {"inspect", "a.arrow", "b.arrow"}, {"inspect", "--bogus", "a.arrow"}, {"inspect", "--max-memory", "lots", "a.arrow"},
		{"version", "extra"}, {"help", "frobnicate"},
	} {
		r := runCommand(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stdout+r.stderr, "usage") {
			t.Errorf("cdevice %v: exit %d, output %q", args, r.code, r.stdout+r.stderr)
		}
	}
}

// --help (and 'cdevice help CMD') prints a command's usage and succeeds.
func TestHelp(t *testing.T) {
	r := runCommand(t, nil, "--help")
	for _, cmd := range []string{"devices", "selftest", "bench", "inspect", "version"} {
		if r.code != 0 || !strings.Contains(r.stderr, "  "+cmd+" ") {
			t.Errorf("cdevice --help: exit %d, lacks %s:\n%s", r.code, cmd, r.stderr)
		}
	}
	for _, c := range []struct {
		cmd   string
		flags []string
	}{
		{"devices", []string{"-json"}},
		{"selftest", []string{"-device", "-json", "ArrowDeviceArrayStream", "ArrowAsyncDeviceStream", "Exit status"}},
		{"bench", []string{"-device", "-json", "-size", "256MiB"}},
		{"inspect", []string{"-json", "-max-memory", "FILE", "ARROW1"}},
		{"version", []string{"-json", "purego", "arrow-go"}},
	} {
		for _, args := range [][]string{{c.cmd, "--help"}, {c.cmd, "-h"}, {"help", c.cmd}} {
			r := runCommand(t, nil, args...)
			out := r.stdout + r.stderr
			if r.code != 0 || !strings.Contains(out, "usage: cdevice "+c.cmd) {
				t.Errorf("cdevice %v: exit %d, output %q", args, r.code, out)
				continue
			}
			for _, want := range c.flags {
				if !strings.Contains(out, want) {
					t.Errorf("cdevice %v: help lacks %q:\n%s", args, want, out)
				}
			}
		}
	}
}
