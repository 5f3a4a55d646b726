/* dl.h: open a library by the name the Go side loaded it by, and find its
 * functions, from a C test peer: dlopen on Unix, LoadLibrary on Windows. */
#ifndef CDEVICE_DL_H
#define CDEVICE_DL_H

#ifdef _WIN32
#include <windows.h>

static inline void *dl_open(const char *path) { return (void *)LoadLibraryA(path); }
static inline void *dl_sym(void *h, const char *name) { return (void *)GetProcAddress((HMODULE)h, name); }
static inline void dl_close(void *h) { FreeLibrary((HMODULE)h); }
#else
#include <dlfcn.h>

static inline void *dl_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static inline void *dl_sym(void *h, const char *name) { return dlsym(h, name); }
static inline void dl_close(void *h) { dlclose(h); }
#endif

#endif
