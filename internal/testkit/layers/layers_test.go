package layers

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/purearrow/cdevice"

var update = flag.Bool("update", false, "redraw ARCHITECTURE.md's table of layers from Layers")

// pkg is one package directory of the module tree (examples' modules too).
type pkg struct {
	path      string   // in the module: "." for the root, "stream", "examples/flight"
	imports   []string // of its non-test files, in the module (same form), or "purego"
	testKitBy []string // its non-test files that import the test kit
}

// root is the module's root, two levels above this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("the module root is not %s: %v", r, err)
	}
	return r
}

// walk reads the imports of every package in the tree, by parsing its
// files (whatever their build constraints: every platform's imports).
func walk(t *testing.T, dir string) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		k := pkgs[rel]
		if k == nil {
			k = &pkg{path: rel}
			pkgs[rel] = k
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			var in string
			switch {
			case path == module:
				in = "."
			case strings.HasPrefix(path, module+"/"):
				in = strings.TrimPrefix(path, module+"/")
			case path == "github.com/ebitengine/purego" || strings.HasPrefix(path, "github.com/ebitengine/purego/"):
				in = "purego"
			default:
				continue
			}
			if strings.HasPrefix(in, TestKit) {
				k.testKitBy = append(k.testKitBy, filepath.Base(p))
			}
			if !slices.Contains(k.imports, in) {
				k.imports = append(k.imports, in)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// layerOf maps each package to its layer's index.
func layerOf() map[string]int {
	m := map[string]int{}
	for i, l := range Layers {
		for _, p := range l.Packages {
			m[p] = i
		}
	}
	return m
}

// violations is every import of pkgs against the rules, as a sentence.
func violations(pkgs map[string]*pkg) []string {
	layer := layerOf()
	var out []string
	for _, k := range pkgs {
		example := strings.HasPrefix(k.path, "examples/")
		kit := strings.HasPrefix(k.path, TestKit)
		for _, im := range k.imports {
			if slices.Contains(Debt[k.path], im) {
				continue
			}
			switch {
			case im == "purego":
				if k.path != "internal/ffi" && !example {
					out = append(out, fmt.Sprintf("%s imports purego: only internal/ffi may", k.path))
				}
			case example:
				if strings.HasPrefix(im, "internal/") || strings.Contains(im, "/internal/") {
					out = append(out, fmt.Sprintf("%s imports %s: examples use only the public API", k.path, im))
				}
			case kit:
			case strings.HasPrefix(im, TestKit):
				out = append(out, fmt.Sprintf("%s imports %s (in %s): only tests may import the test kit", k.path, im, strings.Join(k.testKitBy, ", ")))
			default:
				from, ok1 := layer[k.path]
				to, ok2 := layer[im]
				if !ok1 || !ok2 {
					continue // reported as unplaced
				}
				if to > from || to == from && !slices.Contains(Same[k.path], im) {
					out = append(out, fmt.Sprintf("%s (%s) imports %s (%s): a package imports only lower layers", k.path, Layers[from].Name, im, Layers[to].Name))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// The imports of every package keep the layers; every production package
// has its place, and every place a package.
func TestLayers(t *testing.T) {
	pkgs := walk(t, root(t))
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
	layer := layerOf()
	for p := range pkgs {
		_, placed := layer[p]
		if !placed && !strings.HasPrefix(p, TestKit) && !strings.HasPrefix(p, "examples/") && !strings.HasPrefix(p, "adbc/bench") {
			t.Errorf("%s has no layer: add it to Layers", p)
		}
	}
	for p := range layer {
		if pkgs[p] == nil {
			t.Errorf("Layers names %s, which is no package", p)
		}
	}
	for from, to := range Debt {
		for _, im := range to {
			if k := pkgs[from]; k == nil || !slices.Contains(k.imports, im) {
				t.Errorf("Debt lists %s → %s, which is gone: take it out", from, im)
			}
		}
	}
}

// The test fails, naming the import, on code that runs against a rule.
func TestLayersCatch(t *testing.T) {
	bad := map[string]*pkg{
		"internal/cmeta": {path: "internal/cmeta", imports: []string{"."}},
		"stream":         {path: "stream", imports: []string{"purego", "async"}},
		"cdata":          {path: "cdata", imports: []string{TestKit + "settle"}, testKitBy: []string{"x.go"}},
		"examples/x":     {path: "examples/x", imports: []string{"internal/ffi"}},
	}
	got := strings.Join(violations(bad), "\n")
	for _, want := range []string{
		"internal/cmeta (device) imports . (bridge)",
		"stream imports purego",
		"stream (interchange) imports async (interchange)",
		"cdata imports internal/testkit/settle (in x.go)",
		"examples/x imports internal/ffi",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violations do not say %q:\n%s", want, got)
		}
	}
}

// ARCHITECTURE.md's table of layers is Layers, drawn.
func TestArchitectureTable(t *testing.T) {
	path := filepath.Join(root(t), "ARCHITECTURE.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- layers: drawn from internal/testkit/layers; go test ./internal/testkit/layers -update -->\n", "<!-- end of layers -->\n"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("ARCHITECTURE.md has no table between %q and %q", begin, end)
	}
	want := table()
	if got := doc[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("ARCHITECTURE.md's table of layers is not Layers (go test ./internal/testkit/layers -update):\n%s", want)
	}
}

// table draws Layers, highest first.
func table() string {
	var b strings.Builder
	b.WriteString("| layer | packages | owns |\n|---|---|---|\n")
	for i := len(Layers) - 1; i >= 0; i-- {
		l := Layers[i]
		names := make([]string, len(l.Packages))
		for k, p := range l.Packages {
			names[k] = "`" + p + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", l.Name, strings.Join(names, ", "), l.Owns)
	}
	b.WriteString("| test kit (outside the layers) | `internal/testkit/...` | what only tests import: C peers built at test time, gold files, doubles of the GPU runtimes; imports anything, imported by no production file |\n")
	b.WriteString("| examples (outside the layers) | `examples/...` | programs against real engines; the public API only |\n")
	return b.String()
}
