package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// memSnap is a process's memory at one moment, after a full GC.
type memSnap struct {
	HeapAlloc  uint64 `json:"heapAlloc"`  // live heap bytes
	RSS        uint64 `json:"rss"`        // resident set, bytes
	Goroutines int    `json:"goroutines"` // live goroutines
}

// memReport is what a memprobe prints: before and after connecting.
type memReport struct {
	Servers int     `json:"servers"`
	Before  memSnap `json:"before"`
	After   memSnap `json:"after"`
}

// snapshot measures this process after two GCs with memory returned to
// the OS, so the figures are live data, not garbage waiting.
func snapshot() (memSnap, error) {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := readRSS()
	return memSnap{HeapAlloc: ms.HeapAlloc, RSS: rss, Goroutines: runtime.NumGoroutine()}, err
}

// readRSS returns VmRSS from /proc/self/status.
func readRSS() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(rest, "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("parsing VmRSS %q: %w", rest, err) // untested: the kernel's format is fixed
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS line in /proc/self/status (%v)", err) // untested: only off Linux
}

// memProbe runs in its own process (so RSS is its own): it connects n
// servers of spec (go-sdk fixtures), idle, either as raw go-sdk sessions ("raw") or as
// bridge servers in one registry ("bridge"), and prints a memReport.
func memProbe(ctx context.Context, spec childSpec, mode string, n int, out io.Writer) (err error) {
	before, berr := snapshot()
	var closers []func() error
	defer func() { err = errors.Join(err, closeAll(closers)) }()
	var mu sync.Mutex
	errs := make([]error, n)
	var wg sync.WaitGroup
	switch mode {
	case "raw":
		for i := range n {
			wg.Go(func() {
				s, err := dialSDK(ctx, spec, "")
				if err != nil {
					errs[i] = err
					return
				}
				mu.Lock()
				closers = append(closers, s.Close)
				mu.Unlock()
				if _, err := s.ListTools(ctx, nil); err != nil {
					errs[i] = fmt.Errorf("listing tools: %w", err) // untested: the fixture always lists
				}
			})
		}
	case "bridge":
		reg := tool.NewRegistry()
		env := cleanEnviron()
		for i := range n {
			s, err := mcpclient.Start(bridgeConfig("m"+strconv.Itoa(i), spec, ""), mcpclient.Options{Registry: reg, Environ: env})
			if err != nil {
				return fmt.Errorf("starting server %d: %w", i, err) // untested: the config is valid
			}
			closers = append(closers, s.Close)
			wg.Go(func() { errs[i] = s.WaitReady(ctx) })
		}
	default:
		return fmt.Errorf("%s=%q: want raw or bridge", memModeEnv, mode)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	after, aerr := snapshot()
	if err := errors.Join(berr, aerr); err != nil {
		return err // untested: only off Linux
	}
	return json.NewEncoder(out).Encode(memReport{Servers: n, Before: before, After: after})
}

// memoryResults is what row 7 measured, per round, per server.
type memoryResults struct {
	servers, rounds       int
	heap, rss, goroutines map[string][]float64 // by mode: "raw", "bridge"
}

// runMemory measures row 7: memprobe processes for raw go-sdk sessions and
// for bridge servers, alternating.
func runMemory(ctx context.Context, o options, exe string, logf func(string, ...any)) (*memoryResults, error) {
	res := &memoryResults{servers: o.memServers, rounds: o.memRounds,
		heap: map[string][]float64{}, rss: map[string][]float64{}, goroutines: map[string][]float64{}}
	for r := range o.memRounds {
		for i := range 2 {
			mode := []string{"raw", "bridge"}[(i+r)%2]
			logf("memory: round %d/%d, %s with %d servers", r+1, o.memRounds, mode, o.memServers)
			rep, err := runMemProbe(ctx, exe, mode, o.memServers)
			if err != nil {
				return res, err
			}
			n := float64(rep.Servers)
			res.heap[mode] = append(res.heap[mode], (float64(rep.After.HeapAlloc)-float64(rep.Before.HeapAlloc))/n)
			res.rss[mode] = append(res.rss[mode], (float64(rep.After.RSS)-float64(rep.Before.RSS))/n)
			res.goroutines[mode] = append(res.goroutines[mode], float64(rep.After.Goroutines-rep.Before.Goroutines)/n)
		}
	}
	return res, nil
}

// runMemProbe runs one memprobe process and decodes its report.
func runMemProbe(ctx context.Context, exe, mode string, n int) (memReport, error) {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(cleanEnviron(), childEnv+"=memprobe", memModeEnv+"="+mode, memServersEnv+"="+strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return memReport{}, fmt.Errorf("memory probe (%s, %d servers): %w: %s", mode, n, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var rep memReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return memReport{}, fmt.Errorf("memory probe (%s, %d servers): bad report %q: %w", mode, n, out, err)
	}
	if rep.Servers != n {
		// untested: the probe reports what it was asked for
		return memReport{}, fmt.Errorf("memory probe (%s): reported %d servers, want %d", mode, rep.Servers, n)
	}
	return rep, nil
}
