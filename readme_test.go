package cdevice_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// A fenced block of a Markdown page: its language, its text, and the
// sentence before it (for "It prints:").
type block struct {
	page, lang, code, before string
}

var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")

// docBlocks are the fenced blocks of README.md and docs/*.md.
func docBlocks(t *testing.T) []block {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	for _, p := range append([]string{"README.md"}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
			before := strings.TrimSpace(text[:m[0]])
			if i := strings.LastIndex(before, "\n"); i >= 0 {
				before = before[i+1:]
			}
			out = append(out, block{page: p, lang: text[m[2]:m[3]], code: text[m[4]:m[5]], before: before})
		}
	}
	return out
}

// TestDocBlocks keeps every code block of the README and docs/ in step
// with code that runs: a complete Go program builds, and where "It
// prints:" and a text block follow it, it runs and prints that; every
// other Go snippet is a verbatim run of lines from an example function
// (which go test runs and checks); a shell block parses, and the packages
// and subcommands it runs exist; a TOML block parses; a diff's added
// imports are this module's packages.
func TestDocBlocks(t *testing.T) {
	blocks := docBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("found %d code blocks in README.md and docs/", len(blocks))
	}
	examples := exampleLines(t)
	for i, b := range blocks {
		where := b.page + " block " + strings.SplitN(b.code, "\n", 2)[0]
		switch b.lang {
		case "go":
			if !strings.HasPrefix(b.code, "package main") {
				if !containsRun(examples, normalize(b.code)) {
					t.Errorf("%s is not copied from an example function:\n%s", where, b.code)
				}
				continue
			}
			var want *string
			if i+1 < len(blocks) && blocks[i+1].lang == "text" && blocks[i+1].before == "It prints:" && blocks[i+1].page == b.page {
				want = &blocks[i+1].code
			}
			runProgram(t, where, b.code, want)
		case "sh":
			checkShell(t, where, b.code)
		case "toml":
			var v map[string]any
			if _, err := toml.Decode(b.code, &v); err != nil {
				t.Errorf("%s does not parse: %v", where, err)
			}
		case "diff":
			checkImports(t, where, b.code)
		case "text":
			if b.before == "It prints:" {
				continue // checked with its program
			}
			checkShell(t, where, transcriptCommands(b.code))
		default:
			t.Errorf("%s: a block of no language a test checks (%q)", where, b.lang)
		}
	}
}

// transcriptCommands are the commands of a terminal transcript ("$ cmd").
func transcriptCommands(s string) string {
	var cmds []string
	for _, l := range strings.Split(s, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			cmds = append(cmds, c)
		}
	}
	return strings.Join(cmds, "\n")
}

var (
	goRun       = regexp.MustCompile(`go (?:run|test|build|vet)(?: -[a-z]+(?:=\S+)?)* (\./\S+)`)
	subcommand  = regexp.MustCompile(`(?m)(?:^|[ \t])(?:\./cmd/cdevice|cdevice)[ \t]+([a-z]+)`)
	subcommands = []string{"devices", "selftest", "bench", "inspect", "version", "help"}
)

// checkShell parses a shell block and checks that the packages it runs
// with go and the cdevice subcommands it names exist.
func checkShell(t *testing.T, where, code string) {
	t.Helper()
	if bash, err := exec.LookPath("bash"); err == nil {
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(code)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", where, err, out)
		}
	}
	for _, m := range goRun.FindAllStringSubmatch(code, -1) {
		dir := strings.TrimSuffix(m[1], "/...")
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("%s runs %s, which is no package here", where, m[1])
		}
	}
	for _, m := range subcommand.FindAllStringSubmatch(code, -1) {
		if !slices.Contains(subcommands, m[1]) {
			t.Errorf("%s runs cdevice %s, which is no subcommand", where, m[1])
		}
	}
}

var addedImport = regexp.MustCompile(`(?m)^\+\s*(?:\w+\s+)?"(github\.com/purearrow/cdevice[^"]*)"`)

// checkImports checks that a diff's added imports of this module exist.
func checkImports(t *testing.T, where, code string) {
	t.Helper()
	found := false
	for _, m := range addedImport.FindAllStringSubmatch(code, -1) {
		found = true
		dir := "." + strings.TrimPrefix(m[1], "github.com/purearrow/cdevice")
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("%s imports %s, which is no package here", where, m[1])
		}
	}
	if !found {
		t.Errorf("%s adds no import of this module to check", where)
	}
}

// The README's map of packages names exactly the module's packages that a
// user can import or run: neither internal ones nor examples.
func TestREADMEPackageMap(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\(https://pkg\.go\.dev/github\.com/purearrow/cdevice((?:/[a-z0-9/]+)?)\)`)
	var mapped []string
	for _, m := range link.FindAllStringSubmatch(string(readme), -1) {
		mapped = append(mapped, "."+m[1])
	}
	var public []string
	err = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if n == "testdata" || n == "internal" || n == "examples" || n == "bench" || p != "." && strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dir := "./" + filepath.ToSlash(filepath.Dir(p))
			if dir == "./." {
				dir = "."
			}
			if !slices.Contains(public, dir) {
				public = append(public, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(mapped)
	slices.Sort(public)
	if !slices.Equal(mapped, public) {
		t.Errorf("the README's map names %v\nthe module's public packages are %v", mapped, public)
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
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// runProgram builds a documented program inside the module without
// leaving it there, and where want is given runs it: it must print want.
func runProgram(t *testing.T, where, code string, want *string) {
	_, err := exec.LookPath("go")
	testsupport.Need(t, "the go command", err)
	dir, err := os.MkdirTemp(".", ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-o", bin, "./"+filepath.Base(dir))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s does not build: %v\n%s", where, err, out)
		return
	}
	if want == nil {
		return
	}
	if os.Getenv(selfexec.ExecEnv) != "" {
		// Emulated (qemu-user): the program would need the target's
		// loader flags that go test was given; the native legs run it.
		t.Logf("%s builds; its output is checked where the tests run natively", where)
		return
	}
	var stdout, stderr bytes.Buffer
	run := exec.Command(bin)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Errorf("%s: %v\n%s", where, err, stderr.String())
	}
	if stdout.String() != *want {
		t.Errorf("%s prints\n%s\nthe page says\n%s", where, stdout.String(), *want)
	}
}
