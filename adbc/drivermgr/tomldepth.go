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
// once, keeping a stack of at most maxTOMLDepth open brackets.
func tomlNesting(s string) error {
	type open struct {
		c    byte // { or [
		dots int  // the tables opened by the key whose value it is
	}
	var (
		brackets []open
		header   int // tables the last [header] opened
		below    int // tables opened by the keys of the open brackets
		dots     int // tables the current key opened
		inKey    = true
		inHeader bool // reading a [header] or [[header]]
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '#':
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			end := skipTOMLString(s, i)
			if end < 0 {
				// Refused, not left to the library: were this reading
				// wrong about a string the library takes, the rest of the
				// file would go unchecked.
				return fmt.Errorf("a string that does not end, at byte %d", i)
			}
			i = end - 1
		case c == '\n' && len(brackets) == 0 && !inHeader:
			inKey, dots = true, 0
		case c == '[' && len(brackets) == 0 && inKey && dots == 0 && !inHeader:
			inHeader, header = true, 1 // [a] opens a; [[a]] an array of tables too
			if i+1 < len(s) && s[i+1] == '[' {
				i++
				header++
			}
		case c == ']' && inHeader:
			inHeader = false
			if i+1 < len(s) && s[i+1] == ']' {
				i++
			}
		case c == '.' && inHeader:
			header++
		case c == '.' && inKey:
			dots++
		case c == '=' && inKey && !inHeader:
			inKey = false
		case (c == '{' || c == '[') && !inKey:
			brackets = append(brackets, open{c, dots})
			below, dots = below+dots, 0
			inKey = c == '{' // an inline table's first key
		case (c == '}' || c == ']') && len(brackets) > 0:
			top := brackets[len(brackets)-1]
			brackets = brackets[:len(brackets)-1]
			below, dots = below-top.dots, top.dots
		case c == ',' && len(brackets) > 0 && brackets[len(brackets)-1].c == '{':
			inKey, dots = true, 0 // the next pair's key
		}
		if header+below+dots+len(brackets) > maxTOMLDepth {
			return fmt.Errorf("exceeded maximum nested value depth of %d", maxTOMLDepth)
		}
	}
	return nil
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
