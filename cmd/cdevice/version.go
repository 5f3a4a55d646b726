package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"text/tabwriter"
)

const versionUsage = `usage: cdevice version [--json]

Print this build's version (the module version Go recorded, with the VCS
revision when there is one) and the versions of Go, purego (which loads the
device runtimes) and arrow-go it was built with.

flags:
`

// Modules whose versions 'cdevice version' reports.
const (
	modulePath = "github.com/purearrow/cdevice"
	puregoPath = "github.com/ebitengine/purego"
	arrowPath  = "github.com/apache/arrow-go/v18"
)

type versionReport struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // VCS revision, "+modified" when the tree was
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Purego   string `json:"purego"`
	ArrowGo  string `json:"arrow_go"`
}

func version(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", versionUsage, stderr)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "version", "unexpected argument %q", rest[0])
	}
	rep := buildVersions()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cdevice version: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	v := rep.Version
	if rep.Revision != "" {
		v += " (" + rep.Revision + ")"
	}
	fmt.Fprintf(tw, "cdevice\t%s\n", v)
	fmt.Fprintf(tw, "go\t%s %s\n", rep.Go, rep.Platform)
	fmt.Fprintf(tw, "purego\t%s\n", rep.Purego)
	fmt.Fprintf(tw, "arrow-go\t%s\n", rep.ArrowGo)
	tw.Flush()
	return exitOK
}

// buildVersions reads the versions from the build information Go recorded
// in the binary; "unknown" where it has none.
func buildVersions() versionReport {
	rep := versionReport{Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Purego: "unknown", ArrowGo: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return rep
	}
	rep.Go = bi.GoVersion
	for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		v := m.Version
		if m.Replace != nil {
			v = m.Replace.Path + " " + m.Replace.Version
		}
		switch m.Path {
		case modulePath:
			rep.Version = v
		case puregoPath:
			rep.Purego = v
		case arrowPath:
			rep.ArrowGo = v
		}
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rep.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && rep.Revision != "" {
		rep.Revision += "+modified"
	}
	return rep
}
