package ffi

const libcName = "/usr/lib/libSystem.B.dylib"
