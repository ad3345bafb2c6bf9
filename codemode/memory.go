package codemode

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// watchEvery is how often the memory watchdog samples the heap: often
// enough that a program doubling a string is stopped within a few
// doublings, rarely enough to cost nothing (a sample reads one counter
// without stopping the world).
const watchEvery = 2 * time.Millisecond

// heapMetric is the bytes of heap objects, garbage not yet swept
// included.
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes reads heapMetric.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchMemory calls over once the heap has grown by more than limit
// bytes since it started, and returns when ctx is done. goja has no heap
// limit of its own, and the heap is the process's: so growth is what is
// bounded, and a sample over the line is confirmed by a collection
// first, so that garbage (the program's or anyone's) does not count.
// After a false alarm the next check waits for another limit's growth,
// so a program that makes garbage fast does not collect on every tick.
func watchMemory(ctx context.Context, limit uint64, over func()) {
	base := heapBytes()
	next := base + limit
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if heapBytes() <= next {
			continue
		}
		runtime.GC()
		live := heapBytes()
		if live > base+limit {
			over()
			return
		}
		next = max(live, base) + limit
	}
}
