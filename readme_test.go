package cdevice_test

import (
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestREADMESnippets keeps the README's Go in step with code that runs: a
// complete program must build; every other snippet must be a verbatim run of
// lines from an example function (which go test runs and checks).
func TestREADMESnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d Go snippets in README.md", len(blocks))
	}
	examples := exampleLines(t)
	for i, b := range blocks {
		code := b[1]
		if strings.HasPrefix(code, "package main") {
			buildProgram(t, i, code)
			continue
		}
		if !containsRun(examples, normalize(code)) {
			t.Errorf("README snippet %d is not copied from an example function:\n%s", i, code)
		}
	}
}

// exampleLines returns the lines of every example_test.go in the module.
func exampleLines(t *testing.T) []string {
	var lines []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "example_test.go" {
			return err
		}
		b, err := os.ReadFile(path)
		lines = append(lines, normalize(string(b))...)
		lines = append(lines, "") // no run spans two files
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func normalize(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func containsRun(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slicesEqual(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

func slicesEqual(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// buildProgram builds a README program inside the module without leaving
// it there.
func buildProgram(t *testing.T, i int, code string) {
	_, err := exec.LookPath("go")
	testsupport.Need(t, "the go command", err)
	module := "."
	dir, err := os.MkdirTemp(module, ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./"+filepath.Base(dir))
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("README program %d does not build: %v\n%s", i, err, out)
	}
}
