/*
 * errno_peer.c: the C runtime's errno values, by name, for the test that
 * holds cdevice's Errno constants to the platform's errno.h (glibc's on
 * Linux, the C runtime mingw-w64 builds against on Windows, ...).
 */
#include <errno.h>
#include <string.h>

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

static const struct {
	const char *name;
	int value;
} codes[] = {
#define CODE(x) {#x, x}
	CODE(EPERM), CODE(ENOENT), CODE(EIO), CODE(EAGAIN), CODE(ENOMEM), CODE(EACCES),
	CODE(EBUSY), CODE(ENODEV), CODE(EINVAL), CODE(ENOSPC), CODE(EPIPE), CODE(ENOSYS),
	CODE(EOVERFLOW), CODE(ENOTSUP), CODE(ECANCELED), CODE(ETIMEDOUT),
#undef CODE
};

/* errno_value is the value of the errno.h macro named name, or -1. */
EXPORT int errno_value(const char *name)
{
	size_t i;
	for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (strcmp(codes[i].name, name) == 0)
			return codes[i].value;
	return -1;
}
