package ffi

import "os"

// CLibrary is the C runtime every process of this platform has loaded: the C
// heap comes from it, and tests use it as a library that is there but is no
// GPU runtime.
const CLibrary = "/usr/lib/libSystem.B.dylib"

// loaderPathEnv is the variable of folders the dynamic loader searches
// first for a library named without a folder.
const loaderPathEnv = "DYLD_LIBRARY_PATH"

// loaderPath is $DYLD_LIBRARY_PATH (dyld reads it at start; a program that
// changes it later is not told apart here).
func loaderPath() string { return os.Getenv(loaderPathEnv) }

// rtldNoload is dlopen's RTLD_NOLOAD.
const rtldNoload = 0x10
