package gateway

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Close waits for every POST that passed the Handler's closing check,
// and none passes once it waits: a POST seen running after Close
// returned slipped past it (checked, then counted too late).
func TestNoPOSTSlipsPastClose(t *testing.T) {
	for range 40 {
		g := New(tool.NewRegistry(), Options{})
		var returned atomic.Bool // Close returned
		var passed atomic.Int64
		h := g.guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			passed.Add(1)
			if returned.Load() {
				t.Error("a POST passed the closing check after Close returned")
			}
			time.Sleep(200 * time.Microsecond)
			if returned.Load() {
				t.Error("Close returned while a POST that passed its check was served")
			}
		}))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil))
				}
			})
		}
		for passed.Load() < 8 {
			time.Sleep(50 * time.Microsecond)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		returned.Store(true)
		time.Sleep(time.Millisecond) // POSTs still arriving are refused
		close(stop)
		wg.Wait()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("POST after Close: status %d, want 503", rec.Code)
		}
	}
}
