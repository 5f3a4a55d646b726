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
		var end bool
		if i, end = s.step(line, i); end {
			s.buf.WriteString(line[from:i])
			if s.statement {
				out = append(out, statement{text: strings.TrimSpace(s.buf.String()), line: s.start})
			}
			s.buf.Reset()
			s.statement = false
			from = i + 1
			s.start = s.line
		}
	}
	s.buf.WriteString(line[from:])
	s.buf.WriteByte('\n')
	if !s.statement && s.quote == 0 && s.dollar == "" && s.comment == 0 {
		s.buf.Reset() // only blanks and comments so far
	}
	return out
}

// step reads what starts at line[i] in the splitter's state (a comment,
// a quote, a dollar quote, or plain SQL) and returns the index of the last
// byte it took, and whether that is a semicolon that ends a statement.
func (s *splitter) step(line string, i int) (int, bool) {
	switch {
	case s.comment > 0:
		return s.inComment(line, i), false
	case s.quote != 0:
		if line[i] == s.quote {
			if i+1 < len(line) && line[i+1] == s.quote { // '' inside '...'
				return i + 1, false
			}
			s.quote = 0
		}
		return i, false
	case s.dollar != "":
		if strings.HasPrefix(line[i:], s.dollar) {
			i += len(s.dollar) - 1
			s.dollar = ""
		}
		return i, false
	}
	return s.plain(line, i)
}

// inComment reads inside /* */ comments, which nest.
func (s *splitter) inComment(line string, i int) int {
	switch {
	case line[i] == '*' && i+1 < len(line) && line[i+1] == '/':
		s.comment--
		return i + 1
	case line[i] == '/' && i+1 < len(line) && line[i+1] == '*':
		s.comment++
		return i + 1
	}
	return i
}

// plain reads SQL outside quotes and comments: what opens one, and the
// semicolon that ends a statement.
func (s *splitter) plain(line string, i int) (int, bool) {
	c := line[i]
	next := byte(0)
	if i+1 < len(line) {
		next = line[i+1]
	}
	switch {
	case c == '\'' || c == '"' || c == '`':
		s.quote, s.statement = c, true
	case c == '-' && next == '-':
		return len(line), false // the rest of the line is a comment
	case c == '/' && next == '*':
		s.comment++
		return i + 1, false
	case c == '$':
		s.statement = true
		if tag, ok := dollarTag(line[i:]); ok {
			s.dollar = tag
			return i + len(tag) - 1, false
		}
	case c == ';':
		return i, true
	case c != ' ' && c != '\t' && c != '\r':
		s.statement = true
	}
	return i, false
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
