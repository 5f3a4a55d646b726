package cdevice

import (
	"sync"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/leak"
)

// The memory cache keeps blocks that device arrays have given back (device
// memory from CopyToDevice, Go memory from ToHost) for later copies of the
// same size, as CUDA's caching allocators do: a large copy then costs the
// transfer alone, not an allocation with its page faults and zeroing.
// Each device, and the host, holds at most the limit in cached bytes.
var memCache = blockCache{limit: 1 << 30, free: map[cacheKey][]cachedBlock{}, bytes: map[place]int64{}}

type blockCache struct {
	mu    sync.Mutex
	limit int64
	free  map[cacheKey][]cachedBlock
	bytes map[place]int64 // cached bytes per device and for the host
}

// A place is where memory lives: a device by type and id (Device values
// need not be comparable), or the host (the zero place).
type place struct {
	t  abi.DeviceType
	id int64
}

func placeOf(dev device.Device) place {
	if dev == nil {
		return place{}
	}
	return place{dev.Type(), dev.ID()}
}

type cacheKey struct {
	at   place
	size int64
}

type cachedBlock struct {
	dev  device.Device  // frees p
	p    device.Pointer // device memory, or
	host []byte         // host memory
}

// SetMemoryCacheLimit sets how many bytes of freed memory are kept for reuse
// per device (and for the host), frees what is over it, and returns the old
// limit. 0 turns the cache off. The default is 1 GiB.
func SetMemoryCacheLimit(bytes int64) (old int64) {
	memCache.mu.Lock()
	old, memCache.limit = memCache.limit, max(bytes, 0)
	memCache.mu.Unlock()
	memCache.trim(false)
	return old
}

// TrimMemoryCache frees every cached block.
func TrimMemoryCache() { memCache.trim(true) }

// CachedMemory returns the bytes held by the cache for dev (nil: the host).
func CachedMemory(dev device.Device) int64 {
	memCache.mu.Lock()
	defer memCache.mu.Unlock()
	return memCache.bytes[placeOf(dev)]
}

func (c *blockCache) take(k cacheKey) (cachedBlock, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	bs := c.free[k]
	if len(bs) == 0 {
		return cachedBlock{}, false
	}
	b := bs[len(bs)-1]
	c.free[k] = bs[:len(bs)-1]
	c.bytes[k.at] -= k.size
	return b, true
}

// put caches b, or frees it when that would pass the limit.
func (c *blockCache) put(k cacheKey, b cachedBlock) {
	c.mu.Lock()
	if c.bytes[k.at]+k.size <= c.limit {
		c.free[k] = append(c.free[k], b)
		c.bytes[k.at] += k.size
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	b.free()
}

func (b cachedBlock) free() {
	if b.dev != nil {
		b.dev.Free(b.p)
	}
}

// trim frees cached blocks: all of them, or those over the limit.
func (c *blockCache) trim(all bool) {
	c.mu.Lock()
	var drop []cachedBlock
	for k, bs := range c.free {
		for len(bs) > 0 && (all || c.bytes[k.at] > c.limit) {
			drop = append(drop, bs[len(bs)-1])
			bs = bs[:len(bs)-1]
			c.bytes[k.at] -= k.size
		}
		c.free[k] = bs
	}
	c.mu.Unlock()
	for _, b := range drop {
		b.free()
	}
}

// allocDevice returns size bytes on dev, cached or new.
func allocDevice(dev device.Device, size int) (device.Pointer, error) {
	if b, ok := memCache.take(cacheKey{placeOf(dev), int64(size)}); ok {
		leak.Add(leak.DeviceAlloc, 1)
		return b.p, nil
	}
	p, err := dev.Alloc(size)
	if err == nil {
		leak.Add(leak.DeviceAlloc, 1)
	}
	return p, err
}

// freeDevice gives device memory from allocDevice back.
func freeDevice(dev device.Device, p device.Pointer, size int64) {
	leak.Add(leak.DeviceAlloc, -1)
	memCache.put(cacheKey{placeOf(dev), size}, cachedBlock{dev: dev, p: p})
}

// allocHost returns size bytes of Go memory, cached or new; its contents are
// not zeroed when cached (ToHost overwrites them).
func allocHost(size int64) []byte {
	if b, ok := memCache.take(cacheKey{place{}, size}); ok {
		return b.host
	}
	return make([]byte, size)
}

func freeHost(b []byte) {
	if len(b) > 0 {
		memCache.put(cacheKey{place{}, int64(len(b))}, cachedBlock{host: b[:len(b):len(b)]})
	}
}
