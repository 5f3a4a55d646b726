package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purearrow/cdevice/loader"
)

type selftestJSON struct {
	Devices []string `json:"devices"`
	Sample  struct {
		Columns int      `json:"columns"`
		Batches []int64  `json:"batch_rows"`
		Types   []string `json:"types"`
	} `json:"sample"`
	Checks []struct {
		Device         string `json:"device"`
		Interface      string `json:"interface"`
		Import         string `json:"import"`
		Pass           bool   `json:"pass"`
		ElapsedNS      int64  `json:"elapsed_ns"`
		Error          string `json:"error"`
		FailingColumns []struct {
			Column, Type, Error string
		} `json:"failing_columns"`
	} `json:"checks"`
	Leaks struct {
		Pass   bool   `json:"pass"`
		Detail string `json:"detail"`
	} `json:"leaks"`
	Passed int  `json:"passed"`
	Failed int  `json:"failed"`
	Pass   bool `json:"pass"`
}

var selftestInterfaceNames = []string{"ArrowDeviceArray", "ArrowDeviceArrayStream", "ArrowAsyncDeviceStream"}

// checkSelftest asserts that a selftest report passed every check of every
// interface, both import paths, on exactly the devices want.
func checkSelftest(t *testing.T, r result, want []string) selftestJSON {
	t.Helper()
	var rep selftestJSON
	decode(t, r, &rep)
	if r.code != 0 || !rep.Pass || rep.Failed != 0 || !rep.Leaks.Pass {
		t.Errorf("exit %d, pass %v, %d failed, leaks %v %s", r.code, rep.Pass, rep.Failed, rep.Leaks.Pass, rep.Leaks.Detail)
		for _, c := range rep.Checks {
			if !c.Pass {
				t.Errorf("%s %s (%s): %s; columns %+v", c.Device, c.Interface, c.Import, c.Error, c.FailingColumns)
			}
		}
	}
	if !slices.Equal(rep.Devices, want) {
		t.Errorf("devices %v, want %v", rep.Devices, want)
	}
	if n := len(want) * len(selftestInterfaceNames) * 2; len(rep.Checks) != n || rep.Passed != n {
		t.Errorf("%d checks, %d passed; want %d", len(rep.Checks), rep.Passed, n)
	}
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		seen[c.Device+" "+c.Interface+" "+c.Import] = true
		if c.ElapsedNS < 0 {
			t.Errorf("%s %s (%s): elapsed %d", c.Device, c.Interface, c.Import, c.ElapsedNS)
		}
	}
	for _, d := range want {
		for _, itf := range selftestInterfaceNames {
			for _, ip := range []string{"C path", "identity"} {
				if !seen[d+" "+itf+" "+ip] {
					t.Errorf("no check of %s %s (%s)", d, itf, ip)
				}
			}
		}
	}
	return rep
}

// On this machine (the CPU, and OpenCL through PoCL where installed) every
// device passes every interface.
func TestSelftestJSON(t *testing.T) {
	devs := availableDevices(t)
	if !slices.Contains(devs, "opencl:0") {
		if os.Getenv("CI") == "true" {
			t.Errorf("no OpenCL device (PoCL) found: devices %v", devs)
		} else {
			t.Logf("no OpenCL device here: testing %v", devs)
		}
	}
	rep := checkSelftest(t, runCommand(t, nil, "selftest", "--json"), devs)

	// The sample covers every type family.
	types := strings.Join(rep.Sample.Types, "\n")
	for _, want := range []string{
		"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"float16", "float32", "float64", "decimal(", "decimal256(", "bool",
		"date32", "date64", "time32[s]", "time64[ns]", "timestamp[us, tz=America/New_York]", "duration[ms]",
		"month_interval", "day_time_interval", "month_day_nano_interval",
		"utf8", "large_utf8", "binary", "large_binary", "string_view", "binary_view", "fixed_size_binary",
		"list<", "large_list<", "fixed_size_list<", "list_view<", "large_list_view<", "struct<", "map<",
		"sparse_union<", "dense_union<", "dictionary<", "run_end_encoded<", "extension<",
	} {
		if !strings.Contains(types, want) {
			t.Errorf("sample lacks a %s column:\n%s", want, types)
		}
	}
	if rep.Sample.Columns < 50 || len(rep.Sample.Batches) < 2 {
		t.Errorf("sample: %d columns, batches %v", rep.Sample.Columns, rep.Sample.Batches)
	}
}

func TestSelftestText(t *testing.T) {
	r := runCommand(t, nil, "selftest", "--device", "cpu")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range append([]string{"DEVICE", "INTERFACE", "IMPORT", "RESULT", "TIME", "C path", "identity",
		"leak check: pass", "selftest passed: 6 of 6 checks on cpu."}, selftestInterfaceNames...) {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "FAIL") || strings.ContainsAny(r.stdout, "\r\x1b") {
		t.Errorf("output has a failure or terminal escapes:\n%q", r.stdout)
	}
	// Not a terminal: progress is plain lines on stderr.
	if !strings.Contains(r.stderr, "[6/6] cpu ArrowAsyncDeviceStream (identity): pass") || strings.ContainsAny(r.stderr, "\r\x1b") {
		t.Errorf("progress on stderr:\n%q", r.stderr)
	}
}

// With no runtime installed the selftest runs on the CPU alone, and passes.
func TestSelftestNothingInstalled(t *testing.T) {
	checkSelftest(t, runCommand(t, nothingInstalled, "selftest", "--json"), []string{"cpu"})
}

func TestSelftestOneDevice(t *testing.T) {
	devs := availableDevices(t)
	want := devs[len(devs)-1] // a GPU or OpenCL device where there is one
	checkSelftest(t, runCommand(t, nil, "selftest", "--json", "--device", want), []string{want})
}

// A device this machine lacks: exit 1, saying why and what to do.
func TestSelftestUnavailableDevice(t *testing.T) {
	r := runCommand(t, nothingInstalled, "selftest", "--device", "opencl:0")
	if r.code != 1 || !strings.Contains(r.stderr, "no such device") || !strings.Contains(r.stderr, "opencl: ") ||
		!strings.Contains(r.stderr, "/nonexistent") || !strings.Contains(r.stderr, "cdevice devices") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// CDEVICE_DEVICE picks the device, as it picks the default of 'cdevice
// devices'; --device overrides it.
func TestSelftestDeviceEnv(t *testing.T) {
	devs := availableDevices(t)
	want := devs[len(devs)-1] // a GPU or OpenCL device where there is one
	checkSelftest(t, runCommand(t, []string{loader.EnvDevice + "=" + want}, "selftest", "--json"), []string{want})
	checkSelftest(t, runCommand(t, []string{loader.EnvDevice + "=opencl:99"}, "selftest", "--json", "--device", "cpu"), []string{"cpu"})
	for env, msg := range map[string]string{
		"opencl:99": "CDEVICE_DEVICE=opencl:99: this machine has no such device",
		"gpu":       "CDEVICE_DEVICE: loader: malformed device spec",
	} {
		r := runCommand(t, []string{loader.EnvDevice + "=" + env}, "selftest")
		if r.code != 1 || !strings.Contains(r.stderr, msg) {
			t.Errorf("%s=%s: exit %d, stderr %q", loader.EnvDevice, env, r.code, r.stderr)
		}
	}
}

// Under a clock that does not move between the two reads around a check
// (Windows' and Wine's tick about every 16 ms) a check truly takes 0: the
// report says 0, never a negative figure, and the checks still pass. On a
// clock that steps, every figure is a whole number of steps.
func TestSelftestCoarseClock(t *testing.T) {
	defer func(old func() time.Time) { now = old }(now)
	frozen := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name  string
		clock func() time.Time
	}{{"frozen", func() time.Time { return frozen }}, {"coarse", coarseClock()}} {
		now = c.clock
		var stdout, stderr bytes.Buffer
		code := selftest([]string{"--device", "cpu", "--json"}, &stdout, &stderr)
		rep := checkSelftest(t, result{stdout: stdout.String(), stderr: stderr.String(), code: code}, []string{"cpu"})
		for _, ch := range rep.Checks {
			if step := int64(32 * time.Millisecond); ch.ElapsedNS%step != 0 || c.name == "frozen" && ch.ElapsedNS != 0 {
				t.Errorf("%s: %s %s (%s): elapsed %d ns", c.name, ch.Device, ch.Interface, ch.Import, ch.ElapsedNS)
			}
		}
	}
	now = func() time.Time { return frozen }
	stdout := new(bytes.Buffer)
	if code := selftest([]string{"--device", "cpu"}, stdout, io.Discard); code != 0 || !regexp.MustCompile(`pass +0s\n`).MatchString(stdout.String()) {
		t.Errorf("exit %d; a check of no measurable time is not shown as 0s:\n%s", code, stdout)
	}
}
