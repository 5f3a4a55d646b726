package opencl_test

import (
	"testing"
)

const benchSize = 256 << 20

// benchCopy times one 256 MiB copy plus a stream synchronization per
// iteration, in each buffer mode.
func benchCopy(b *testing.B, read bool) {
	for _, mode := range []string{"svm", "clmem"} {
		d := modes(b)[mode]
		if d == nil {
			continue
		}
		b.Run(mode, func(b *testing.B) {
			host := make([]byte, benchSize)
			for i := range host {
				host[i] = byte(i) // fault the pages in before timing
			}
			p, err := d.Alloc(benchSize)
			must(b, err)
			defer d.Free(p)
			s, err := d.NewStream()
			must(b, err)
			defer s.Close()
			must(b, d.CopyToDevice(p, 0, host, s)) // warm up the device pages
			must(b, s.Synchronize())
			b.SetBytes(benchSize)
			b.ResetTimer()
			for range b.N {
				if read {
					err = d.CopyToHost(host, p, 0, s)
				} else {
					err = d.CopyToDevice(p, 0, host, s)
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpenCLWrite(b *testing.B) { benchCopy(b, false) }
func BenchmarkOpenCLRead(b *testing.B)  { benchCopy(b, true) }

// benchC is the same loop in C (testdata/c/opencl_peer.c) on the same
// context and default queue: clEnqueueWrite/ReadBuffer for cl_mem,
// clEnqueueSVMMemcpy for SVM. The wall time is C's loop alone.
func benchC(b *testing.B, read bool) {
	p := loadPeer(b)
	for _, mode := range []string{"svm", "clmem"} {
		d := modes(b)[mode]
		if d == nil {
			continue
		}
		b.Run(mode, func(b *testing.B) {
			h := p.benchNew(d.Context(), d.CommandQueue(), svmFlag(d), benchSize)
			if h == 0 {
				b.Fatal("peer_bench_new failed")
			}
			defer p.benchFree(h)
			var r uintptr
			if read {
				r = 1
			}
			if ns := int64(p.benchRun(h, r, 1)); ns < 0 { // warm up
				b.Fatalf("peer_bench_run: %d", ns)
			}
			b.SetBytes(benchSize)
			b.ResetTimer()
			if ns := int64(p.benchRun(h, r, uintptr(b.N))); ns < 0 {
				b.Fatalf("peer_bench_run: %d", ns)
			}
		})
	}
}

func BenchmarkOpenCLWriteFromC(b *testing.B) { benchC(b, false) }
func BenchmarkOpenCLReadFromC(b *testing.B)  { benchC(b, true) }
