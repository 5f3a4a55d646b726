package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

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
	printDevices(stdout, rep, def, why, defErr)
	if defErr != nil {
		return 1
	}
	return 0
}

// textWidth is the terminal width the text reports fit; --json keeps every
// string whole.
const textWidth = 100

// printDevices writes the devices report as text: tables whose cells are
// shortened to fit textWidth, and the reasons, wrapped.
func printDevices(w io.Writer, rep *loader.Report, def device.Device, why string, defErr error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSTATUS\tLIBRARY\tVERSION\tPROBE")
	for _, b := range rep.Backends {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shorten(b.Name, 10), status(b.Err), shortenPath(orDash(b.Library), 34),
			shorten(orDash(b.Version), 20), shorten(b.Elapsed.Round(time.Microsecond).String(), 12))
	}
	tw.Flush()
	for _, b := range rep.Backends {
		if b.Err != nil {
			fmt.Fprint(w, wrap(b.Name+": ", b.Reason, textWidth))
		}
		if b.Note != "" {
			fmt.Fprint(w, wrap(b.Name+": ", b.Note, textWidth))
		}
		for _, s := range b.Skipped {
			fmt.Fprint(w, wrap(b.Name+": skipped ", s, textWidth))
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tNAME\tMEMORY")
	fmt.Fprintln(tw, "cpu\thost (Go memory)\t-")
	for _, b := range rep.Backends {
		for _, d := range b.Devices {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", shorten(d.Spec(), 16), shorten(d.Name, 60), formatMemory(d.TotalMemory))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	if defErr != nil {
		fmt.Fprint(w, wrap("default: ", "none: "+defErr.Error(), textWidth))
		return
	}
	fmt.Fprint(w, wrap("default: ", fmt.Sprintf("%s (%s)", spec(def), why), textWidth))
}

// status is a backend's probe error in a word or two (its reason says the
// rest).
func status(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, device.ErrNotFound):
		return "not found"
	case errors.Is(err, device.ErrNoDevice):
		return "no device"
	case errors.Is(err, device.ErrMissingSymbol):
		return "too old"
	}
	return "failed"
}

// shorten cuts s to n runes, ending in "…" when it had more.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// shortenPath cuts s to n runes, keeping the end (a path's file name).
func shortenPath(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// wrap returns prefix and text as lines of at most width runes, the later
// ones indented under the text; words longer than a line are split.
func wrap(prefix, text string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	line := []rune(prefix)
	empty := true // line holds no word yet
	flush := func() {
		b.WriteString(string(line) + "\n")
		line, empty = []rune(indent), true
	}
	for _, word := range strings.Fields(text) {
		wr := []rune(word)
		if !empty && len(line)+1+len(wr) > width {
			flush()
		}
		if !empty {
			line = append(line, ' ')
		}
		for len(line)+len(wr) > width {
			n := width - len(line)
			line = append(line, wr[:n]...)
			wr = wr[n:]
			flush()
		}
		line, empty = append(line, wr...), false
	}
	if !empty {
		flush()
	}
	return b.String()
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
		Skipped   []string `json:"skipped,omitempty"`
		Note      string   `json:"note,omitempty"`
		ProbeNS   int64    `json:"probe_ns"` // loader.BackendReport.Elapsed: 0 within one clock tick
		Devices   []device `json:"devices"`
	}
	out := struct {
		Backends      []backend `json:"backends"`
		Default       string    `json:"default,omitempty"`
		DefaultReason string    `json:"default_reason"`
	}{Backends: []backend{}, DefaultReason: why}
	for _, b := range rep.Backends {
		jb := backend{Name: b.Name, Available: b.Err == nil, Reason: b.Reason, Library: b.Library,
			Version: b.Version, Skipped: b.Skipped, Note: b.Note, ProbeNS: b.Elapsed.Nanoseconds(), Devices: []device{}}
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
