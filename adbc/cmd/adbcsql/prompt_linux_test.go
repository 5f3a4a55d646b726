package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"golang.org/x/sys/unix"
)

// A pseudo-terminal: the test types on master what the command reads from
// slave, its terminal.
type pty struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	seen   strings.Builder // everything the command wrote
}

func openPTY(t *testing.T) (*pty, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
		t.Fatal(err)
	}
	p := &pty{t: t, master: m}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { m.Close(); s.Close() })
	return p, s
}

// startOn runs the command on the terminal slave, as a session of its
// own whose controlling terminal it is (Ctrl-C there is its SIGINT).
func startOn(t *testing.T, slave *os.File, env []string, args ...string) *exec.Cmd {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := selfexec.Command(append(env, mainEnv+"="+string(a)))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitFor waits until the command has written want since mark (an offset
// in what it wrote), and returns the offset after it.
func (p *pty) waitFor(mark int, want string) int {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		s := p.seen.String()
		p.mu.Unlock()
		if i := strings.Index(s[mark:], want); i >= 0 {
			return mark + i + len(want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.Fatalf("the terminal never showed %q; after the mark it shows:\n%q\nall:\n%q", want, p.seen.String()[mark:], p.seen.String())
	return 0
}

func (p *pty) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.master.WriteString(s); err != nil {
		p.t.Fatal(err)
	}
}

// The prompt on a terminal: a statement over two lines with the
// continuation prompt, NULL set apart in colour, Ctrl-C dropping what is
// typed, Ctrl-C cancelling a statement and the prompt back at once (on a
// new connection: SQLite's driver cannot stop the call), lines typed
// ahead, history kept in the user's configuration folder, \q.
func TestPrompt(t *testing.T) {
	p, slave := openPTY(t)
	config := t.TempDir()
	cmd := startOn(t, slave, []string{"XDG_CONFIG_HOME=" + config, "HOME=" + config}, sqlite(t)...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	m := p.waitFor(0, promptFirst)
	p.typeKeys("SELECT 1 AS one,\r")
	m = p.waitFor(m, promptMore)
	p.typeKeys("  NULL AS n;\r")
	m = p.waitFor(m, "one | n")
	m = p.waitFor(m, "\x1b[2mNULL\x1b[22m")
	m = p.waitFor(m, "(1 row)")
	m = p.waitFor(m, promptFirst)

	p.typeKeys("SELECT 'partial")
	p.typeKeys("\x03")
	m = p.waitFor(m, "^C")
	m = p.waitFor(m, promptFirst)
	p.typeKeys("SELECT 3 AS three;\r")
	m = p.waitFor(m, "three")
	m = p.waitFor(m, promptFirst)

	p.typeKeys("WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 300000000) SELECT count(*) FROM g;\r")
	time.Sleep(500 * time.Millisecond) // the statement runs
	p.typeKeys("\x03")
	m = p.waitFor(m, "ERROR: interrupted (Ctrl-C)")
	m = p.waitFor(m, promptFirst)
	p.typeKeys("SELECT 4 AS four;\r")
	m = p.waitFor(m, "four")
	m = p.waitFor(m, promptFirst)

	// Typed ahead, as a paste: two lines at once, two statements on one.
	p.typeKeys("SELECT 7 AS seven;\rSELECT 8 AS eight; SELECT 9 AS nine;\r")
	m = p.waitFor(m, "seven")
	m = p.waitFor(m, "eight")
	m = p.waitFor(m, "nine")
	p.waitFor(m, promptFirst)

	p.typeKeys("\\q\r")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("\\q: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal(`\q did not end the prompt`)
	}
	hist, err := os.ReadFile(filepath.Join(config, "adbcsql", "history"))
	if err != nil || !strings.Contains(string(hist), "SELECT 3 AS three;") {
		t.Errorf("history: %q, %v", hist, err)
	}
}

// NO_COLOR: no escape sequences around NULL; Ctrl-D ends the prompt.
func TestPromptNoColor(t *testing.T) {
	p, slave := openPTY(t)
	cmd := startOn(t, slave, []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}, sqlite(t)...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	m := p.waitFor(0, promptFirst)
	p.typeKeys("SELECT NULL AS n;\r")
	m = p.waitFor(m, "(1 row)")
	p.mu.Lock()
	out := p.seen.String()
	p.mu.Unlock()
	if strings.Contains(out, "\x1b[2m") || !strings.Contains(out, "NULL") {
		t.Errorf("NO_COLOR: %q", out)
	}
	p.waitFor(m, promptFirst)
	p.typeKeys("\x04")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Ctrl-D: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("Ctrl-D did not end the prompt")
	}
}

// On a terminal a long result draws a progress line (rows, bytes, rate)
// on standard error, and clears it at the end.
func TestProgressOnTerminal(t *testing.T) {
	p, slave := openPTY(t)
	out := filepath.Join(t.TempDir(), "p.csv")
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT x, 'row ' || x FROM c"
	cmd := startOn(t, slave, nil, append([]string{"--out", out, "-c", q}, sqlite(t)...)...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	m := p.waitFor(0, " rows/s")
	p.waitFor(m, "\r\x1b[K(3000000 rows, written to "+out+")")
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the command did not end")
	}
}
