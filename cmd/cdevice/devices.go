package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/loader"
)

func devices(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("devices", "usage: cdevice devices [--json]\n\nList every device backend tried (CUDA, HIP, OpenCL), the library and\nversion it loaded, its devices, or the exact reason it is unavailable,\nand the default device with the reason it was chosen.\n\n", stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "devices", "unexpected argument %q", rest[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := loader.Discover(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "cdevice: discovery failed: %v\n", err)
		return 1
	}
	def, why, defErr := loader.Default(ctx)
	if *asJSON {
		return writeJSON(stdout, stderr, rep, def, why, defErr)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BACKEND\tSTATUS\tLIBRARY\tVERSION\tPROBE")
	for _, b := range rep.Backends {
		status := "ok"
		if b.Err != nil {
			status = b.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", b.Name, status, orDash(b.Library), orDash(b.Version), b.Elapsed.Round(time.Microsecond))
	}
	w.Flush()
	fmt.Fprintln(stdout)
	w = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DEVICE\tNAME\tMEMORY")
	fmt.Fprintln(w, "cpu\thost (Go memory)\t-")
	for _, b := range rep.Backends {
		for _, d := range b.Devices {
			fmt.Fprintf(w, "%s:%d\t%s\t%s\n", d.Type, d.ID, d.Name, formatMemory(d.TotalMemory))
		}
	}
	w.Flush()
	fmt.Fprintln(stdout)
	if defErr != nil {
		fmt.Fprintf(stdout, "default: none: %v\n", defErr)
		return 1
	}
	fmt.Fprintf(stdout, "default: %s (%s)\n", spec(def), why)
	return 0
}

func writeJSON(stdout, stderr io.Writer, rep *loader.Report, def device.Device, why string, defErr error) int {
	type device struct {
		Type        string `json:"type"`
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		TotalMemory int64  `json:"total_memory"`
	}
	type backend struct {
		Name      string   `json:"name"`
		Available bool     `json:"available"`
		Reason    string   `json:"reason,omitempty"`
		Library   string   `json:"library,omitempty"`
		Version   string   `json:"version,omitempty"`
		ProbeNS   int64    `json:"probe_ns"`
		Devices   []device `json:"devices"`
	}
	out := struct {
		Backends      []backend `json:"backends"`
		Default       string    `json:"default,omitempty"`
		DefaultReason string    `json:"default_reason"`
	}{Backends: []backend{}, DefaultReason: why}
	for _, b := range rep.Backends {
		jb := backend{Name: b.Name, Available: b.Err == nil, Reason: b.Reason, Library: b.Library,
			Version: b.Version, ProbeNS: b.Elapsed.Nanoseconds(), Devices: []device{}}
		for _, d := range b.Devices {
			jb.Devices = append(jb.Devices, device{Type: d.Type.String(), ID: d.ID, Name: d.Name, TotalMemory: d.TotalMemory})
		}
		out.Backends = append(out.Backends, jb)
	}
	if defErr != nil {
		out.DefaultReason = defErr.Error()
	} else {
		out.Default = spec(def)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "cdevice: %v\n", err)
		return 1
	}
	if defErr != nil {
		return 1
	}
	return 0
}
