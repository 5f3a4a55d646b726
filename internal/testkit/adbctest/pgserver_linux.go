package adbctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// A PGServer is a throwaway PostgreSQL server of one test's own
// (.ci/postgres start), which the test may kill, stop and restart without
// disturbing the server the other tests share (a backend's crash makes
// PostgreSQL end every connection).
type PGServer struct {
	Dir    string // the server's directory (data, socket, log)
	URI    string // the driver URI
	script string
}

// StartPG starts a server for t, stopped and removed when t ends. t
// needs PostgreSQL's server binaries (initdb, pg_ctl: Debian's
// postgresql).
func StartPG(t testing.TB) *PGServer {
	t.Helper()
	root, err := ctest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := &PGServer{script: filepath.Join(root, ".ci", "postgres")}
	// Under os.TempDir, not t.TempDir: as root the server runs as the user
	// postgres, who must be let through every folder above its own.
	if s.Dir, err = os.MkdirTemp("", "cdevice-pgfault-"); err != nil {
		t.Fatal(err)
	}
	out, err := s.run("start")
	if err != nil {
		os.RemoveAll(s.Dir)
		testsupport.Need(t, "PostgreSQL's server binaries (initdb, pg_ctl) for .ci/postgres", err)
	}
	s.URI = strings.TrimSpace(out)
	t.Cleanup(func() {
		s.Continue() // a test that failed while it was stopped
		if _, err := s.run("stop"); err != nil {
			t.Errorf("stopping the server: %v", err)
		}
	})
	return s
}

func (s *PGServer) run(verb string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(s.script, verb, s.Dir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf(".ci/postgres %s: %v: %s", verb, err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Restart starts the server again after it was killed (its URI stays).
func (s *PGServer) Restart(t testing.TB) {
	t.Helper()
	if _, err := s.run("restart"); err != nil {
		t.Fatal(err)
	}
}

// postmaster is the server's main process as its pid file names it, if
// that process is PostgreSQL's (a stale file's number may have gone to
// another process since).
func (s *PGServer) postmaster() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, err
	}
	if !isPostgres(pid) {
		return 0, fmt.Errorf("process %d of %s/data/postmaster.pid is not PostgreSQL's", pid, s.Dir)
	}
	return pid, nil
}

// isPostgres: pid runs PostgreSQL's server (its main process or a backend).
func isPostgres(pid int) bool {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "postgres"
}

// KillAll kills the whole server with SIGKILL, its main process and every
// backend at once, as the crash of its machine would, and waits until they
// are gone.
func (s *PGServer) KillAll(t testing.TB) {
	t.Helper()
	pm, err := s.postmaster()
	if err != nil {
		t.Fatal(err)
	}
	// Stopped first, so that none sees another die (the backends learn of
	// the main process's death and would end themselves, tidily; the main
	// process would start a recovery), then killed.
	syscall.Kill(pm, syscall.SIGSTOP)
	pids := append([]int{pm}, children(pm)...)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if !settle.Eventually(func() bool {
		for _, pid := range pids {
			if alive(pid) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the server's processes %v outlived SIGKILL", pids)
	}
}

// Reaped waits until the server's main process has reaped pid, a backend
// killed: only then has it seen the crash, and begun to end every other
// connection and recover (until then a new connection would work, and be
// ended a moment later).
func Reaped(t testing.TB, pid int) {
	t.Helper()
	if !settle.Eventually(func() bool { _, state := procStat(pid); return state == "" }) {
		t.Fatalf("backend %d was never reaped", pid)
	}
}

// Continue sends SIGCONT to every process of the server (what Stop
// stopped).
func (s *PGServer) Continue() {
	if pm, err := s.postmaster(); err == nil {
		for _, pid := range append([]int{pm}, children(pm)...) {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
}

// children are the PostgreSQL processes whose parent is pid (/proc).
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(child); ppid == pid && isPostgres(child) {
			out = append(out, child)
		}
	}
	return out
}

// alive: pid runs and is no zombie (a container's first process may not
// reap what it inherits).
func alive(pid int) bool {
	_, state := procStat(pid)
	return state != "" && state != "Z" && state != "X"
}

// procStat is pid's parent and state ("" when pid is gone).
func procStat(pid int) (ppid int, state string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, ""
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// Backend is the server process that serves c (pg_backend_pid).
func Backend(t testing.TB, c adbc.Connection) int {
	t.Helper()
	pid, err := QueryInt(context.Background(), c, "SELECT pg_backend_pid()::int8")
	if err != nil {
		t.Fatalf("pg_backend_pid: %v", err)
	}
	return int(pid)
}
