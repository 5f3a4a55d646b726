//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/purearrow/cdevice/internal/selfexec"
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
