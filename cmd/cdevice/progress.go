package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// A progress shows how far a long command has got: a bar redrawn in place
// when stdout is a terminal, one plain line per finished step on stderr
// otherwise (logs and pipes), so stdout keeps only the results.
type progress struct {
	tty          bool
	term, plain  io.Writer
	total, count int
	okWord       string // what a plain line says of a step that worked
	width        int    // of the bar's line on the terminal now
}

func newProgress(stdout, stderr io.Writer, tty bool, total int) *progress {
	return &progress{tty: tty, term: stdout, plain: stderr, total: total, okWord: "pass"}
}

const barWidth = 24

// start shows that step label is running.
func (p *progress) start(label string) {
	if !p.tty {
		return
	}
	filled := barWidth * p.count / max(p.total, 1)
	line := fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), p.count+1, p.total, label)
	p.redraw(line)
}

// redraw overwrites the terminal's line with line: a carriage return, and
// spaces over what is left of the old one (no escape sequences, which not
// every console understands).
func (p *progress) redraw(line string) {
	n := utf8.RuneCountInString(line)
	fmt.Fprintf(p.term, "\r%s%s", line, strings.Repeat(" ", max(p.width-n, 0)))
	p.width = n
}

// done records that step label finished.
func (p *progress) done(label string, ok bool, d time.Duration) {
	p.count++
	if p.tty {
		return
	}
	result := p.okWord
	if !ok {
		result = "FAIL"
	}
	fmt.Fprintf(p.plain, "[%d/%d] %s: %s (%s)\n", p.count, p.total, label, result, roundDuration(d))
}

// finish clears the bar before the results are printed.
func (p *progress) finish() {
	if p.tty && p.width > 0 {
		p.redraw("")
		fmt.Fprint(p.term, "\r")
	}
}
