// Package selfexec runs a test binary again as a child process, the way
// go test ran it: tests that need a fresh process (a command run as a user
// would, discovery with another environment) use it on every platform the
// suite runs on, qemu-user included. Only tests import it.
package selfexec

import (
	"os"
	"os/exec"
	"strings"
)

// ExecEnv names a wrapper that runs the test binaries, as go test -exec
// does: under qemu-user without binfmt_misc a child process needs it too
// (CI sets CDEVICE_TEST_EXEC=qemu-arm-static for its arm run).
const ExecEnv = "CDEVICE_TEST_EXEC"

// Command runs this test binary again with args (such as
// -test.run=^TestX$), through the ExecEnv wrapper when there is one, with
// env added to this process's environment. A race-enabled child skips the
// race detector's one-second sleep at exit.
func Command(env []string, args ...string) *exec.Cmd {
	name := os.Args[0]
	if wrapper := strings.Fields(os.Getenv(ExecEnv)); len(wrapper) > 0 {
		name, args = wrapper[0], append(append(wrapper[1:], name), args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE")), env...)
	return cmd
}
