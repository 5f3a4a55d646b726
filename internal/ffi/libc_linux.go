package ffi

const libcName = "libc.so.6"
