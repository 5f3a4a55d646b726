package ffi

// CLibrary is the C runtime every process of this platform has loaded: the C
// heap comes from it, and tests use it as a library that is there but is no
// GPU runtime.
const CLibrary = "/usr/lib/libSystem.B.dylib"
