/* fakecuda_mixed.c: the CUDA test double with both APIs in one library,
 * the runtime's (cuda*) and the driver's (cu*), over the same state: an
 * event made by cuEventCreate can be waited by cudaStreamWaitEvent, for
 * tests that export with one API and import with the other. cudaSetDevice
 * makes the device's primary context current, as the runtime does, and
 * cuCtxSetCurrent sets the runtime's current device. */
#define FAKE_WITH_RUNTIME_API 1
#include "fakecuda.c"
