package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/term"
)

// The prompts: the first line of a statement's, and the continuation's.
const (
	promptFirst = "adbcsql> "
	promptMore  = "     ..> "
)

// prompt reads statements at a terminal (in, whose file is raw while a
// line is read: line editing, history) until \q or Ctrl-D. Ctrl-C drops
// what is typed, or cancels the statement running; a failed statement is
// said, and the prompt comes back.
func (s *session) prompt(in io.Reader) int {
	f, ok := in.(*os.File)
	if !ok {
		code, _ := s.script("stdin", in)
		return code
	}
	keys := &keyReader{r: f}
	hist := loadHistory()
	// One terminal keeps what was typed ahead (a pasted script); after a
	// Ctrl-C, which leaves it mid-line, a new one.
	newTerminal := func() *term.Terminal {
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{keys, s.out.stdout}, promptFirst)
		t.History = hist
		return t
	}
	t := newTerminal()
	fmt.Fprintf(s.out.stdout, "adbcsql: connected. \\? for help, \\q to quit.\n")
	var sp splitter
	for {
		if sp.idle() {
			t.SetPrompt(promptFirst)
		} else {
			t.SetPrompt(promptMore)
		}
		if w, h, err := term.GetSize(int(f.Fd())); err == nil {
			t.SetSize(w, h)
		}
		line, err := readLine(f, t)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && keys.interrupted.Swap(false):
			sp.reset() // Ctrl-C: what was typed is dropped
			fmt.Fprintln(s.out.stdout, "^C")
			t = newTerminal()
			continue
		case errors.Is(err, io.EOF): // Ctrl-D
			fmt.Fprintln(s.out.stdout)
			hist.save()
			return exitOK
		default:
			fmt.Fprintln(s.stderr, "adbcsql:", err)
			hist.save()
			return exitFailed
		}
		for _, st := range sp.feed(line) {
			if st.meta && (st.text == `\q` || st.text == `\quit`) {
				hist.save()
				return exitOK
			}
			if err := s.exec(st); err != nil {
				fmt.Fprintln(s.stderr, "ERROR:", err)
			}
		}
	}
}

// readLine reads a line with the terminal raw, and puts it back after,
// so that a statement runs in cooked mode (Ctrl-C is a signal then).
func readLine(f *os.File, t *term.Terminal) (string, error) {
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return "", err
	}
	defer term.Restore(int(f.Fd()), old)
	return t.ReadLine()
}

// keyReader passes the terminal's keys on, noting a Ctrl-C (which
// x/term's ReadLine reports as io.EOF, as it does Ctrl-D).
type keyReader struct {
	r           io.Reader
	interrupted atomic.Bool
}

func (k *keyReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	for _, b := range p[:n] {
		if b == 3 {
			k.interrupted.Store(true)
		}
	}
	return n, err
}

// history is the prompt's history, kept in the user's configuration
// folder (adbcsql/history), its last maxHistory lines.
type history struct {
	path  string
	lines []string // oldest first
	dirty bool     // lines added since it was read
}

const maxHistory = 1000

func loadHistory() *history {
	h := &history{}
	dir, err := os.UserConfigDir()
	if err != nil || !filepath.IsAbs(dir) {
		return h // kept in memory only
	}
	h.path = filepath.Join(dir, "adbcsql", "history")
	if f, err := os.Open(h.path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			h.lines = append(h.lines, sc.Text())
		}
		f.Close()
		if len(h.lines) > maxHistory {
			h.lines = h.lines[len(h.lines)-maxHistory:]
		}
	}
	return h
}

func (h *history) Add(entry string) {
	if strings.TrimSpace(entry) == "" || len(h.lines) > 0 && h.lines[len(h.lines)-1] == entry {
		return
	}
	h.lines = append(h.lines, entry)
	h.dirty = true
	if len(h.lines) > maxHistory {
		h.lines = h.lines[1:]
	}
}

func (h *history) Len() int { return len(h.lines) }

func (h *history) At(i int) string { return h.lines[len(h.lines)-1-i] }

// save writes the history back, its last maxHistory lines.
func (h *history) save() {
	if h.path == "" || !h.dirty {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	os.WriteFile(h.path, []byte(strings.Join(h.lines, "\n")+"\n"), 0o600)
	h.dirty = false
}
