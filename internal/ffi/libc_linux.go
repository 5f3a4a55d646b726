package ffi

import (
	"os"
	"strings"
)

// CLibrary is the C runtime every process of this platform has loaded: the C
// heap comes from it, and tests use it as a library that is there but is no
// GPU runtime.
const CLibrary = "libc.so.6"

// loaderPathEnv is the variable of folders the dynamic loader searches
// first for a library named without a folder.
const loaderPathEnv = "LD_LIBRARY_PATH"

// loaderPath is $LD_LIBRARY_PATH as the dynamic loader read it, when the
// process started (it never reads it again): from /proc/self/environ, or
// the variable now where that cannot be read.
func loaderPath() string {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return os.Getenv(loaderPathEnv)
	}
	for kv := range strings.SplitSeq(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, loaderPathEnv+"="); ok {
			return v
		}
	}
	return ""
}

// rtldNoload is dlopen's RTLD_NOLOAD (glibc and musl).
const rtldNoload = 0x4
