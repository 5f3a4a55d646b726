/*
 * planted.c: a library that an attacker would plant where a program might
 * load it by mistake (the current directory, a relative PATH or
 * LD_LIBRARY_PATH entry). Loading it is enough to run its code: DllMain on
 * Windows, a constructor elsewhere. That code only leaves a mark: a file
 * "<its own file name>.loaded" in the folder $CDEVICE_PLANTED_MARKS names,
 * so that the tests can tell which copies were loaded. The tests copy it
 * under the names of the libraries the library searches for (cudart64_13.dll,
 * libcudart.so.13, OpenCL.dll, a driver's name).
 */
#ifdef _WIN32
#include <windows.h>

static void mark(HINSTANCE self)
{
	char dir[MAX_PATH], path[MAX_PATH], file[2 * MAX_PATH + 16];
	DWORD n = GetEnvironmentVariableA("CDEVICE_PLANTED_MARKS", dir, sizeof dir);
	if (n == 0 || n >= sizeof dir || GetModuleFileNameA(self, path, sizeof path) == 0)
		return;
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '\\' || *p == '/')
			base = p + 1;
	wsprintfA(file, "%s\\%s.loaded", dir, base);
	HANDLE h = CreateFileA(file, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h != INVALID_HANDLE_VALUE) {
		DWORD written;
		WriteFile(h, path, lstrlenA(path), &written, NULL);
		CloseHandle(h);
	}
}

BOOL WINAPI DllMain(HINSTANCE self, DWORD reason, LPVOID reserved)
{
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH)
		mark(self);
	return TRUE;
}
#else
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void mark(void)
{
	const char *dir = getenv("CDEVICE_PLANTED_MARKS");
	Dl_info info;
	if (dir == NULL || dladdr((void *)mark, &info) == 0 || info.dli_fname == NULL)
		return;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	char file[4096];
	snprintf(file, sizeof file, "%s/%s.loaded", dir, base);
	FILE *f = fopen(file, "w");
	if (f != NULL) {
		fputs(info.dli_fname, f);
		fclose(f);
	}
}
#endif
