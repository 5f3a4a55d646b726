package drivermgr

import "fmt"

// maxTOMLDepth bounds how deep a manifest or profile may nest tables and
// arrays, as Arrow's C driver manager does ("exceeded maximum nested value
// depth of 256"). The TOML library recurses and allocates per level
// without a bound of its own: 20 KB nested 5,000 deep took a gigabyte.
const maxTOMLDepth = 256

// tomlNesting checks, before the TOML library sees s, that nothing in it
// nests deeper than maxTOMLDepth: the tables a header opens ([a.b.c] three),
// the tables a dotted key opens (a.b.c = 1 two), and the inline tables and
// arrays of values ({ }, [ ]), outside strings and comments. It reads s
// once (tomlScan), keeping a stack of at most maxTOMLDepth open brackets.
func tomlNesting(s string) error {
	t := tomlScan{inKey: true}
	for i := 0; i < len(s); i++ {
		if !tomlSignificant[s[i]] {
			continue // a byte that changes nothing, in every state
		}
		var err error
		if i, err = t.step(s, i); err != nil {
			return err
		}
		if t.depth() > maxTOMLDepth {
			return fmt.Errorf("exceeded maximum nested value depth of %d", maxTOMLDepth)
		}
	}
	return nil
}

// tomlSignificant are the bytes tomlScan acts on.
var tomlSignificant = func() (t [256]bool) {
	for _, c := range []byte("#\"'[]{}.=,\n") {
		t[c] = true
	}
	return t
}()

// tomlScan is tomlNesting's state machine. Outside strings and comments it
// is in one of three states: a [header] (inHeader), a key (inKey: at the
// start of a line, or after a comma in an inline table), or a value.
type tomlScan struct {
	brackets []tomlOpen
	header   int // tables the last [header] opened
	below    int // tables opened by the keys of the open brackets
	dots     int // tables the current key opened
	inKey    bool
	inHeader bool // reading a [header] or [[header]]
}

// A tomlOpen is an open bracket: { or [, and the tables opened by the
// key whose value it is.
type tomlOpen struct {
	c    byte
	dots int
}

func (t *tomlScan) depth() int { return t.header + t.below + t.dots + len(t.brackets) }

// step reads what starts at s[i] and returns the index of the last byte
// it took.
func (t *tomlScan) step(s string, i int) (int, error) {
	switch c := s[i]; {
	case c == '#':
		for i+1 < len(s) && s[i+1] != '\n' {
			i++
		}
		return i, nil
	case c == '"' || c == '\'':
		end := skipTOMLString(s, i)
		if end < 0 {
			// Refused, not left to the library: were this reading wrong
			// about a string the library takes, the rest of the file
			// would go unchecked.
			return i, fmt.Errorf("a string that does not end, at byte %d", i)
		}
		return end - 1, nil
	case t.inHeader:
		return t.headerByte(s, i), nil
	case t.inKey:
		return t.keyByte(s, i), nil
	}
	t.valueByte(s[i])
	return i, nil
}

// headerByte reads a byte of a [header]: a dot opens one more table, ]
// (or ]]) ends it.
func (t *tomlScan) headerByte(s string, i int) int {
	switch s[i] {
	case '.':
		t.header++
	case ']':
		t.inHeader = false
		if i+1 < len(s) && s[i+1] == ']' {
			i++
		}
	}
	return i
}

// keyByte reads a byte of a key: a dot opens a table, = ends the key; at
// the top level a [ before any dot starts a header ([a] opens a; [[a]]
// an array of tables too).
func (t *tomlScan) keyByte(s string, i int) int {
	switch c := s[i]; {
	case c == '.':
		t.dots++
	case c == '=':
		t.inKey = false
	case c == '[' && len(t.brackets) == 0 && t.dots == 0:
		t.inHeader, t.header = true, 1
		if i+1 < len(s) && s[i+1] == '[' {
			i++
			t.header++
		}
	default:
		t.separator(c) // an empty inline table's }, a new line
	}
	return i
}

// valueByte reads a byte of a value: brackets open and close, and the
// separators that end it.
func (t *tomlScan) valueByte(c byte) {
	if c == '{' || c == '[' {
		t.brackets = append(t.brackets, tomlOpen{c, t.dots})
		t.below, t.dots = t.below+t.dots, 0
		t.inKey = c == '{' // an inline table's first key
		return
	}
	t.separator(c)
}

// separator reads what ends a value or key: a closing bracket (a value
// follows it: the one it closed), a comma in an inline table (its next
// key), a new line at the top level (the next key).
func (t *tomlScan) separator(c byte) {
	n := len(t.brackets)
	switch {
	case (c == '}' || c == ']') && n > 0:
		top := t.brackets[n-1]
		t.brackets = t.brackets[:n-1]
		t.below, t.dots = t.below-top.dots, top.dots
		t.inKey = false
	case c == ',' && n > 0 && t.brackets[n-1].c == '{':
		t.inKey, t.dots = true, 0
	case c == '\n' && n == 0:
		t.inKey, t.dots = true, 0
	}
}

// skipTOMLString returns the index just past the string that starts at
// s[i] (basic or literal, one-line or multi-line), or -1 when it does not
// end.
func skipTOMLString(s string, i int) int {
	q := s[i]
	if i+2 < len(s) && s[i+1] == q && s[i+2] == q { // """ or '''
		for j := i + 3; j+2 < len(s); j++ {
			if q == '"' && s[j] == '\\' {
				j++
				continue
			}
			if s[j] == q && s[j+1] == q && s[j+2] == q {
				// Up to two more quotes are the string's last
				// characters (three quotes, x, four quotes is x and a
				// quote): it ends after the run.
				end := j + 3
				for end < len(s) && s[end] == q && end < j+5 {
					end++
				}
				return end
			}
		}
		return -1
	}
	for j := i + 1; j < len(s); j++ {
		switch {
		case q == '"' && s[j] == '\\':
			j++
		case s[j] == q:
			return j + 1
		case s[j] == '\n':
			return -1
		}
	}
	return -1
}
