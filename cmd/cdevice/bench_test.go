package main

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type benchJSON struct {
	SizeBytes int64    `json:"size_bytes"`
	Devices   []string `json:"devices"`
	Copy      []struct {
		Device                string  `json:"device"`
		Bytes                 int64   `json:"bytes"`
		HostToDeviceNS        int64   `json:"host_to_device_ns"`
		DeviceToHostNS        int64   `json:"device_to_host_ns"`
		HostToDeviceBytesPerS float64 `json:"host_to_device_bytes_per_s"`
		DeviceToHostBytesPerS float64 `json:"device_to_host_bytes_per_s"`
	} `json:"copy"`
	ExportImport []struct {
		Import         string  `json:"import"`
		Columns        int     `json:"columns"`
		Rows           int     `json:"rows"`
		USPerRoundTrip float64 `json:"us_per_round_trip"`
	} `json:"export_import"`
	Streams []struct {
		Interface     string  `json:"interface"`
		Device        string  `json:"device"`
		Import        string  `json:"import"`
		Batches       int     `json:"batches"`
		Depth         int     `json:"depth"`
		BatchesPerSec float64 `json:"batches_per_s"`
	} `json:"streams"`
	ElapsedNS int64 `json:"elapsed_ns"`
}

func TestBenchJSON(t *testing.T) {
	devs := availableDevices(t)
	r := runCommand(t, nil, "bench", "--size", "1048576", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep benchJSON
	decode(t, r, &rep)
	if rep.SizeBytes != 1<<20 || !slices.Equal(rep.Devices, devs) || rep.ElapsedNS < 0 {
		t.Errorf("size %d, devices %v (want %v), elapsed %d", rep.SizeBytes, rep.Devices, devs, rep.ElapsedNS)
	}
	if len(rep.Copy) != len(devs) {
		t.Errorf("%d copy results for %d devices", len(rep.Copy), len(devs))
	}
	for i, c := range rep.Copy {
		if c.Device != devs[i] || c.Bytes != 1<<20 || c.HostToDeviceNS <= 0 || c.DeviceToHostNS <= 0 ||
			c.HostToDeviceBytesPerS <= 0 || c.DeviceToHostBytesPerS <= 0 {
			t.Errorf("copy %+v", c)
		}
	}
	imports := map[string]bool{}
	for _, e := range rep.ExportImport {
		imports[e.Import] = true
		if e.USPerRoundTrip <= 0 || e.Columns != 16 || e.Rows != 1024 {
			t.Errorf("export/import %+v", e)
		}
	}
	if len(rep.ExportImport) != 2 || !imports["C path"] || !imports["identity"] {
		t.Errorf("export/import results %+v", rep.ExportImport)
	}
	// ArrowArrayStream on the host, then a device stream and an async
	// stream per device, each with both import paths.
	if want := 2 + 4*len(devs); len(rep.Streams) != want {
		t.Errorf("%d stream results, want %d: %+v", len(rep.Streams), want, rep.Streams)
	}
	seen := map[string]bool{}
	for _, s := range rep.Streams {
		seen[s.Interface+" "+s.Device+" "+s.Import] = true
		if s.BatchesPerSec <= 0 || s.Batches != 1000 || (s.Interface == "ArrowAsyncDeviceStream") != (s.Depth == 8) {
			t.Errorf("stream %+v", s)
		}
	}
	for _, ip := range []string{"C path", "identity"} {
		if !seen["ArrowArrayStream host "+ip] {
			t.Errorf("no ArrowArrayStream result (%s)", ip)
		}
		for _, d := range devs {
			for _, itf := range []string{"ArrowDeviceArrayStream", "ArrowAsyncDeviceStream"} {
				if !seen[itf+" "+d+" "+ip] {
					t.Errorf("no %s result on %s (%s)", itf, d, ip)
				}
			}
		}
	}
}

func TestBenchText(t *testing.T) {
	r := runCommand(t, nothingInstalled, "bench", "--size", "64KiB", "--device", "cpu")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"BENCHMARK", "DEVICE", "RESULT", "copy host→device, 64 KiB int64", "copy device→host",
		"B/s", "µs per round trip", "ArrowArrayStream, 1000 batches", "ArrowAsyncDeviceStream (depth 8)", "batches/s", "C path", "identity"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// coarseClock reads like Windows' or Wine's clock: it moves in steps of
// 32ms, once every fourth read, so two reads around a short call are equal.
func coarseClock() func() time.Time {
	var mu sync.Mutex
	reads, t := 0, time.Unix(1_700_000_000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if reads++; reads%4 == 0 {
			t = t.Add(32 * time.Millisecond)
		}
		return t
	}
}

// On a coarse clock a short call times as zero; no figure of the bench may
// then be infinite (json: unsupported value: +Inf) or zero.
func TestBenchCoarseClock(t *testing.T) {
	defer func(old func() time.Time) { now = old }(now)
	now = coarseClock()
	var stdout, stderr bytes.Buffer
	if code := bench([]string{"--device", "cpu", "--size", "8", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var rep benchJSON
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	for _, c := range rep.Copy {
		if c.HostToDeviceNS <= 0 || c.DeviceToHostNS <= 0 || math.IsInf(c.HostToDeviceBytesPerS, 0) || math.IsInf(c.DeviceToHostBytesPerS, 0) {
			t.Errorf("copy %+v", c)
		}
	}
	for _, e := range rep.ExportImport {
		if e.USPerRoundTrip <= 0 {
			t.Errorf("export/import %+v", e)
		}
	}
	for _, s := range rep.Streams {
		if s.BatchesPerSec <= 0 || math.IsInf(s.BatchesPerSec, 0) {
			t.Errorf("stream %+v", s)
		}
	}
}

func TestPerCallNeverZero(t *testing.T) {
	defer func(old func() time.Time) { now = old }(now)
	now = func() time.Time { return time.Unix(0, 0) } // a clock that never moves
	d, err := perCall(func() error { return nil })
	if err != nil || d <= 0 {
		t.Errorf("perCall = %v, %v", d, err)
	}
}
