// Command modproxy writes a file-based Go module proxy (GOPROXY=file://DIR)
// serving this checkout's module at one version, as the module proxy
// would serve a tagged commit: a consumer with no replace directive can
// then go get it. .ci/adbc uses it to prove the module is fetchable.
//
//	go run ./.ci/modproxy -o DIR -version v0.0.0-20261129000000-0123456789ab
//
// The zip holds the files git tracks, less nested modules (folders with a
// go.mod of their own), as the go command zips a module.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "the proxy's folder (required)")
	version := flag.String("version", "", "the version to serve (required)")
	flag.Parse()
	if *out == "" || *version == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := write(*out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func write(out, version string) error {
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	module := modulePath(gomod)
	if module == "" {
		return fmt.Errorf("go.mod names no module")
	}
	files, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	var names []string
	nested := map[string]bool{} // folders of other modules
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested[path.Dir(f)] = true
		}
		names = append(names, f)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	prefix := module + "@" + version + "/"
	for _, f := range names {
		if inNested(f, nested) {
			continue
		}
		b, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + f)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC()})
	for name, b := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// modulePath is the module line's path.
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// inNested reports whether f lies in one of the nested modules' folders.
func inNested(f string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}
