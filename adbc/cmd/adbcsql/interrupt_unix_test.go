//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// Ctrl-C on a query that Arrow's SQLite driver cannot cancel (a count that
// would take half a minute): the first cancels it (the call abandoned at
// once), the command exits with status 130; a second, sent before the
// first is through, exits at once with 130 too.
func TestInterrupt(t *testing.T) {
	args, _ := json.Marshal([]string{"--driver", sqliteDriver(t),
		"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 100000000) SELECT count(*) FROM g"})
	for _, signals := range []int{1, 2} {
		cmd := selfexec.Command([]string{mainEnv + "=" + string(args)})
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		time.Sleep(time.Second) // the command is in its query (it prints nothing before the result)
		for range signals {
			cmd.Process.Signal(syscall.SIGINT)
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("%d SIGINT: %v; want exit status %d", signals, err, exitInterrupted)
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%d SIGINT: the command went on with its query", signals)
		}
	}
}

// Ctrl-C on a query that streams (50M rows, printed): one SIGINT stops the
// read at once, whatever the driver does with a cancel; the command says
// it was cancelled, exits with 130, and prints no count of rows as if the
// result were complete.
func TestInterruptStream(t *testing.T) {
	args, _ := json.Marshal([]string{"--driver", sqliteDriver(t), "--progress=false",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c LIMIT 50000000"})
	cmd := selfexec.Command([]string{mainEnv + "=" + string(args)})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(time.Second) // the command is reading the stream
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		t.Logf("exited %v after the SIGINT", time.Since(sent).Round(time.Millisecond))
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("%v; want exit status %d (stderr %q)", err, exitInterrupted, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the command went on reading after the SIGINT")
	}
	if !strings.Contains(stderr.String(), "canceled") || strings.Contains(stderr.String(), "deadline") {
		t.Errorf("stderr %q does not say the query was cancelled", stderr.String())
	}
	if strings.Contains(stdout.String(), "more rows") || strings.Contains(stderr.String(), "rows in") {
		t.Errorf("a cancelled result reported as complete: stdout ends %q, stderr %q", tail(stdout.String()), stderr.String())
	}
}

func tail(s string) string { return s[max(0, len(s)-200):] }
