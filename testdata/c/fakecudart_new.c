/* fakecudart_new.c: the CUDA test double as a newer runtime (CUDA 13.0)
 * than its default driver (12.9) supports, so that cudaGetDeviceCount
 * answers cudaErrorInsufficientDriver: a libcudart.so.13 on a machine whose
 * driver supports only CUDA 12. */
#define FAKE_RUNTIME_VERSION 13000
#define FAKE_DRIVER_VERSION 12090
#include "fakecudart.c"
