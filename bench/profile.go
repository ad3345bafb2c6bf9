package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// profileCalls is how many calls each profiled call path makes: enough
// samples for pprof to rank the costs.
const profileCalls = 20000

// profile writes pprof profiles of the paths whose overhead matters, each
// in isolation (nothing else runs meanwhile), into o.profileDir:
//
//   - bridge-call.cpu.pprof and sdk-call.cpu.pprof: sequential echo calls
//     to the raw responder through the bridge and through the raw go-sdk
//     (the raw responder keeps the server's share small);
//   - bridge-call.allocs.pprof and sdk-call.allocs.pprof: heap profiles
//     taken after each loop, with the one before as base, so
//     `go tool pprof -sample_index=alloc_space -diff_base X.allocs.base.pprof X.allocs.pprof`
//     shows only the loop's allocations;
//   - catalog.cpu.pprof: three discoveries of the large catalog.
func profile(ctx context.Context, o options, exe, responder, catalogPath string, logf func(string, ...any)) error {
	if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
		return fmt.Errorf("creating the profile directory: %w", err)
	}
	n := profileCalls
	if o.smoke {
		n = 50
	}
	raw := responderChild(responder, 0, 1)
	for _, p := range []struct {
		name  string
		start func(context.Context) (caller, error)
	}{
		{"bridge-call", func(ctx context.Context) (caller, error) { return bridgeCaller(ctx, raw, "") }},
		{"sdk-call", func(ctx context.Context) (caller, error) { return rawSDKCaller(ctx, raw, "") }},
	} {
		logf("profile: %s, %d calls", p.name, n)
		c, err := p.start(ctx)
		if err != nil {
			return err
		}
		err = profileLoop(filepath.Join(o.profileDir, p.name), func() error {
			_, err := c.seq(ctx, n)
			return err
		}, func() error {
			_, err := c.seq(ctx, min(n, 500))
			return err
		})
		if cerr := c.close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing: %w", cerr)) // untested: the responder exits 0
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err) // untested: profileLoop's errors are tested on their own
		}
	}
	logf("profile: catalog discovery")
	spec := rawChild(exe, catalogPath)
	return profileLoop(filepath.Join(o.profileDir, "catalog"), func() error {
		for range 3 {
			srv, _, err := startBridge(ctx, catalogServer, spec, "")
			if err == nil {
				err = srv.Close()
			}
			if err != nil {
				return err // untested: the call paths above fail first on a broken server
			}
		}
		return nil
	}, nil)
}

// profileLoop runs warm (if any), then loop under the CPU profiler, and
// writes heap profiles around loop.
func profileLoop(prefix string, loop, warm func() error) error {
	if warm != nil {
		if err := warm(); err != nil {
			return fmt.Errorf("warming up: %w", err)
		}
	}
	if err := writeHeap(prefix + ".allocs.base.pprof"); err != nil {
		return err
	}
	f, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return fmt.Errorf("creating the CPU profile: %w", err) // untested: the heap profile was just created there
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("starting the CPU profile: %w", err)
	}
	err = loop()
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	return writeHeap(prefix + ".allocs.pprof")
}

// writeHeap writes the allocation profile (cumulative since start) to path.
func writeHeap(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the heap profile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("writing the heap profile %s: %w", path, err) // untested: a local file write
	}
	return nil
}
