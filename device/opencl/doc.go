// Package opencl is the OpenCL backend: libOpenCL (the ICD loader, or a
// vendor library) is loaded at run time, nothing before the first Probe.
// Every platform and device is enumerated; each device gets its own context
// and in-order command queue and is registered as opencl:<n>, numbered from 0
// across platforms in enumeration order.
//
// Buffers (this library's convention, since OpenCL has no single pointer
// type): where a device has coarse-grain buffer SVM (OpenCL 2.0+), a
// device.Pointer is an SVM pointer from clSVMAlloc and offsets are pointer
// arithmetic; otherwise it is a cl_mem handle from clCreateBuffer and offsets
// travel separately (the off arguments of the copies). (*Device).UsesSVM says
// which. Setting CDEVICE_OPENCL_SVM=0 before the probe forces cl_mem handles.
// HostAccessible is true only for SVM on a CL_DEVICE_TYPE_CPU device, where
// the SVM pointer is host memory (read it after synchronizing).
//
// Streams are command queues, sync events are cl_event* (an event recorded
// with clEnqueueMarkerWithWaitList). A Device is a device.ForeignStreams:
// command queues that other code made, named by their cl_command_queue,
// wait for our events (clEnqueueBarrierWithWaitList) and our streams for
// them (a marker on the foreign queue); across contexts the host waits. Copies are enqueued without blocking:
// the Go memory of a copy must stay alive and untouched (pinned, if C may
// see it) until the stream or an event recorded after it is synchronized.
// OpenCL has no free-memory query, so MemoryInfo reports the global memory
// size as both free and total. OpenCL 1.2 is needed (markers and barriers
// with wait lists); SVM needs 2.0.
//
// The library searched: $CDEVICE_OPENCL_LIBRARY alone when set, else the
// platform's usual names (libOpenCL.so.1 through the dynamic loader's
// search, OpenCL.dll in System32 only, the macOS framework).
package opencl
