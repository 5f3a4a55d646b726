package main

import "strings"

// A statement is one SQL statement of an input, or one meta command (a
// line that starts with a backslash where a statement would start), with
// the line it starts on (counted from 1).
type statement struct {
	text string
	line int
	meta bool
}

// A splitter cuts input into statements at semicolons outside quotes
// ('...', "...", `...`), dollar quoting ($$...$$, $tag$...$tag$) and
// comments (-- to the end of the line, /* */ nested as PostgreSQL nests
// them). It takes the input a line at a time (the prompt's lines, or a
// script's) and keeps what it has not ended yet.
type splitter struct {
	buf       strings.Builder // the statement being read
	start     int             // its first line
	line      int             // the lines read
	quote     byte            // the quote inside which the last line ended: ' " `
	dollar    string          // the dollar tag inside which it ended ("$$", "$x$")
	comment   int             // the depth of /* */ comments it ended inside
	statement bool            // buf holds more than white space and comments
}

// feed reads one line (without its newline) and returns the statements it
// ended.
func (s *splitter) feed(line string) []statement {
	s.line++
	if s.idle() {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, `\`) {
			return []statement{{text: t, line: s.line, meta: true}}
		}
	}
	if s.buf.Len() == 0 {
		s.start = s.line
	}
	var out []statement
	from := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case s.comment > 0:
			switch {
			case c == '*' && i+1 < len(line) && line[i+1] == '/':
				s.comment--
				i++
			case c == '/' && i+1 < len(line) && line[i+1] == '*':
				s.comment++
				i++
			}
		case s.quote != 0:
			if c == s.quote {
				if i+1 < len(line) && line[i+1] == c { // '' inside '...'
					i++
				} else {
					s.quote = 0
				}
			}
		case s.dollar != "":
			if strings.HasPrefix(line[i:], s.dollar) {
				i += len(s.dollar) - 1
				s.dollar = ""
			}
		case c == '\'' || c == '"' || c == '`':
			s.quote, s.statement = c, true
		case c == '-' && i+1 < len(line) && line[i+1] == '-':
			i = len(line) // the rest of the line is a comment
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			s.comment++
			i++
		case c == '$':
			if tag, ok := dollarTag(line[i:]); ok {
				s.dollar, s.statement = tag, true
				i += len(tag) - 1
			} else {
				s.statement = true
			}
		case c == ';':
			s.buf.WriteString(line[from:i])
			if s.statement {
				out = append(out, statement{text: strings.TrimSpace(s.buf.String()), line: s.start})
			}
			s.buf.Reset()
			s.statement = false
			from = i + 1
			s.start = s.line
		case c != ' ' && c != '\t' && c != '\r':
			s.statement = true
		}
	}
	s.buf.WriteString(line[from:])
	s.buf.WriteByte('\n')
	if !s.statement && s.quote == 0 && s.dollar == "" && s.comment == 0 {
		s.buf.Reset() // only blanks and comments so far
	}
	return out
}

// dollarTag is the dollar-quote opener at the start of s ($$ or $tag$,
// a tag being letters, digits and underscores not starting with a digit),
// where there is one.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			return s[:i+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c >= '0' && c <= '9' && i > 1:
		default:
			return "", false
		}
	}
	return "", false
}

// idle reports whether no statement is under way (a prompt shows its
// first prompt then, not the continuation one).
func (s *splitter) idle() bool {
	return !s.statement && s.quote == 0 && s.dollar == "" && s.comment == 0
}

// rest is what the input ended with that no semicolon ended: the last
// statement of a script may go without one.
func (s *splitter) rest() (statement, bool) {
	t := strings.TrimSpace(s.buf.String())
	st := statement{text: t, line: s.start}
	s.buf.Reset()
	ok := s.statement
	s.statement, s.quote, s.dollar, s.comment = false, 0, "", 0
	return st, ok && t != ""
}

// reset drops what is under way (Ctrl-C at the prompt).
func (s *splitter) reset() { s.rest() }
