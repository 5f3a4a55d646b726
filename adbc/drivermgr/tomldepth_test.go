package drivermgr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// Nesting is counted the way the TOML library nests: tables of a header and
// of a dotted key, inline tables, arrays; never inside strings or comments.
// What passes parses; what is refused is refused before the library sees it.
func TestTOMLNesting(t *testing.T) {
	deep := func(open, close string, n int) string {
		return "x = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
	}
	dotted := func(n int) string { return "a" + strings.Repeat(".a", n) + " = 1\n" }
	header := func(n int) string { return "[a" + strings.Repeat(".a", n-1) + "]\n" }
	siblings := func(format string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	ml := func(q, body string) string { return strings.Repeat(q, 3) + body + strings.Repeat(q, 3) }
	inline := func(n int) string {
		return "x = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n"
	}
	for _, c := range []struct {
		name string
		toml string
		ok   bool
	}{
		{"arrays 256 deep", deep("[", "]", 256), true},
		{"arrays 257 deep", deep("[", "]", 257), false},
		{"arrays 20000 deep", deep("[", "]", 20000), false},
		{"inline tables 256 deep", inline(256), true},
		{"inline tables 257 deep", inline(257), false},
		{"inline tables 5000 deep", inline(5000), false},
		{"a dotted key opening 256 tables", dotted(256), true},
		{"a dotted key opening 257 tables", dotted(257), false},
		{"a header of 256 tables", header(256) + "b = 1\n", true},
		{"a header of 257 tables", header(257) + "b = 1\n", false},
		{"a header, a dotted key and an inline table adding up", header(100) + "b" + strings.Repeat(".b", 100) + " = " + strings.Repeat("{c = ", 57) + "1" + strings.Repeat("}", 57) + "\n", false},
		{"the same one level less", header(100) + "b" + strings.Repeat(".b", 100) + " = " + strings.Repeat("{c = ", 56) + "1" + strings.Repeat("}", 56) + "\n", true},
		{"brackets in strings", "x = '" + strings.Repeat("[", 1000) + "'\ny = \"" + strings.Repeat("{", 1000) + "\\\"\"\n", true},
		{"brackets in multi-line strings", "x = '''\n" + strings.Repeat("[", 1000) + "\n'''\ny = \"\"\"\n" + strings.Repeat("{.", 1000) + "\n\"\"\"\n", true},
		{"brackets in comments", "# " + strings.Repeat("[", 1000) + "\nx = 1 # " + strings.Repeat("{", 1000) + "\n", true},
		{"dots in values", "x = 3.14\ny = [1.5, 2.5]\nz = {a = 1.5, b.c = 2}\n", true},
		{"sibling keys do not add up", "x = {" + siblings("a%d.a.a = 1, ", 200) + "b = 2}\n" + siblings("c%d.c.c = 1\n", 200), true},
		{"sibling arrays do not add up", "x = [" + strings.Repeat("[1], ", 1000) + "[2]]\n", true},
		// A multi-line string's last characters may be one or two of its
		// quotes: the string ends after the run, and what follows is read.
		{"multi-line strings ending in quotes", "a = " + ml("\"", "x\"") + "\nb = " + ml("'", "y''") + "\n", true},
		{"deep after a multi-line string ending in a quote", "a = " + ml("\"", "x\"") + "\n" + inline(5000), false},
		{"deep after a literal one ending in two quotes", "a = " + ml("'", "x''") + "\n" + inline(5000), false},
		{"a string that does not end", "a = \"x\n" + inline(5000), false},
		// After a closing bracket a value has ended: what opens next is
		// counted (an empty inline table left the reading in a key, and
		// arrays after it went uncounted).
		{"deep after an empty inline table", "x = [{}, " + strings.Repeat("[", 5000) + "1" + strings.Repeat("]", 5000) + "]\n", false},
		{"empty inline tables among arrays", "x = [{}, [[1]], {}, [2]]\ny = {a = {}, b = [{}]}\n", true},
	} {
		err := tomlNesting(c.toml)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if c.name == "a string that does not end" {
			if !strings.Contains(fmt.Sprint(err), "does not end") {
				t.Errorf("%s: %v, want it refused as a string that does not end", c.name, err)
			}
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "exceeded maximum nested value depth of 256") {
			t.Errorf("%s: %v does not say the limit as Arrow's driver manager does", c.name, err)
		}
		if c.ok {
			var v map[string]any
			if _, err := toml.Decode(c.toml, &v); err != nil {
				t.Errorf("%s: passes the check but the TOML library refuses it: %v", c.name, err)
			}
		}
	}
}

// BenchmarkTOMLNesting scans a manifest-sized profile of tables, dotted
// keys, inline tables, arrays, strings and comments, 100 times over.
func BenchmarkTOMLNesting(b *testing.B) {
	var sb strings.Builder
	for i := range 100 {
		fmt.Fprintf(&sb, "[driver%d.options]\n# a comment [with {brackets}]\na.b.c = %d\ns = \"a string with [brackets] and a \\\" quote\"\nt = { x = [1, 2, {y = 3}], z = 'lit' }\nm = \"\"\"\nmulti\nline\"\"\"\n", i, i)
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if err := tomlNesting(s); err != nil {
			b.Fatal(err)
		}
	}
}
