package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// profileEnv, set for serve run as this program (-mcpbridge self), names
// the file serve writes the address of its heap-profile listener to:
// serve itself has no pprof endpoint, and this one exists only in the
// soak's own build, when -heap-profiles asks for it.
const profileEnv = "SOAK_HEAP_PROFILE_ADDR_FILE"

// serveHeapProfiles starts the heap-profile listener when profileEnv says
// so; an error stops the child, as the soak cannot profile it.
func serveHeapProfiles() error {
	file := os.Getenv(profileEnv)
	if file == "" {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the heap-profile listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC() // what is live, not what awaits collection
		pprof.Lookup("heap").WriteTo(w, 0)
	})
	go (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
	return os.WriteFile(file, []byte(ln.Addr().String()), 0o600)
}

// profiler fetches serve's heap profiles into a directory; the zero
// profiler (no -heap-profiles) does nothing.
type profiler struct {
	dir      string
	addrFile string // where serve writes its listener's address
}

func newProfiler(dir, tmp string) profiler {
	if dir == "" {
		return profiler{}
	}
	return profiler{dir: dir, addrFile: filepath.Join(tmp, "heap-profile-addr")}
}

// env is what serve's environment gains.
func (pr profiler) env() []string {
	if pr.dir == "" {
		return nil
	}
	return []string{profileEnv + "=" + pr.addrFile}
}

// take writes serve's heap profile to DIR/name.heap.pprof.
func (pr profiler) take(ctx context.Context, name string) error {
	if pr.dir == "" {
		return nil
	}
	addr, err := os.ReadFile(pr.addrFile)
	if err != nil {
		return fmt.Errorf("serve's heap-profile listener: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+strings.TrimSpace(string(addr))+"/heap", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching serve's heap profile: %w", err)
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(pr.dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(pr.dir, name+".heap.pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
