package ffi

const libcName = "msvcrt.dll"
