package cdevice

import (
	"sync"

	"github.com/purearrow/cdevice/device"
)

// The memory cache keeps blocks that device arrays have given back (device
// memory from CopyToDevice, Go memory from ToHost) for later copies of the
// same size, as CUDA's caching allocators do: a large copy then costs the
// transfer alone, not an allocation with its page faults and zeroing.
// Each device, and the host, holds at most the limit in cached bytes.
var memCache = blockCache{limit: 1 << 30, free: map[cacheKey][]cachedBlock{}, bytes: map[device.Device]int64{}}

type blockCache struct {
	mu    sync.Mutex
	limit int64
	free  map[cacheKey][]cachedBlock
	bytes map[device.Device]int64 // cached bytes per device; nil is the host
}

type cacheKey struct {
	dev  device.Device // nil: host memory
	size int64
}

type cachedBlock struct {
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
	return memCache.bytes[dev]
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
	c.bytes[k.dev] -= k.size
	return b, true
}

// put caches b, or frees it when that would pass the limit.
func (c *blockCache) put(k cacheKey, b cachedBlock) {
	c.mu.Lock()
	if c.bytes[k.dev]+k.size <= c.limit {
		c.free[k] = append(c.free[k], b)
		c.bytes[k.dev] += k.size
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if k.dev != nil {
		k.dev.Free(b.p)
	}
}

// trim frees cached blocks: all of them, or those over the limit.
func (c *blockCache) trim(all bool) {
	c.mu.Lock()
	var drop []cacheKey
	var blocks [][]cachedBlock
	for k, bs := range c.free {
		for len(bs) > 0 && (all || c.bytes[k.dev] > c.limit) {
			drop = append(drop, k)
			blocks = append(blocks, []cachedBlock{bs[len(bs)-1]})
			bs = bs[:len(bs)-1]
			c.bytes[k.dev] -= k.size
		}
		c.free[k] = bs
	}
	c.mu.Unlock()
	for i, k := range drop {
		if k.dev != nil {
			k.dev.Free(blocks[i][0].p)
		}
	}
}

// allocDevice returns size bytes on dev, cached or new.
func allocDevice(dev device.Device, size int) (device.Pointer, error) {
	if b, ok := memCache.take(cacheKey{dev, int64(size)}); ok {
		return b.p, nil
	}
	return dev.Alloc(size)
}

// freeDevice gives device memory from allocDevice back.
func freeDevice(dev device.Device, p device.Pointer, size int64) {
	memCache.put(cacheKey{dev, size}, cachedBlock{p: p})
}

// allocHost returns size bytes of Go memory, cached or new; its contents are
// not zeroed when cached (ToHost overwrites them).
func allocHost(size int64) []byte {
	if b, ok := memCache.take(cacheKey{nil, size}); ok {
		return b.host
	}
	return make([]byte, size)
}

func freeHost(b []byte) {
	if len(b) > 0 {
		memCache.put(cacheKey{nil, int64(len(b))}, cachedBlock{host: b[:len(b):len(b)]})
	}
}
