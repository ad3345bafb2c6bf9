package sdkwire

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FlushCancels waits for the notifications/cancelled ExpectCancel announced,
// written before or after it is called, and gives up after its bound.
func TestFlushCancels(t *testing.T) {
	cancelled := &jsonrpc.Request{Method: "notifications/cancelled"}
	other := &jsonrpc.Request{Method: "notifications/progress"}
	tab := NewTable(0)
	if !tab.FlushCancels(time.Hour) {
		t.Fatal("nothing expected: FlushCancels should return at once")
	}
	tab.Written(cancelled) // written before it was announced
	tab.ExpectCancel()
	if !tab.FlushCancels(time.Hour) {
		t.Fatal("already written")
	}
	tab.ExpectCancel()
	tab.Written(other)
	begin := time.Now()
	if tab.FlushCancels(50 * time.Millisecond) {
		t.Fatal("flushed without the notification")
	}
	if d := time.Since(begin); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		tab.Written(cancelled)
	}()
	if !tab.FlushCancels(10 * time.Second) {
		t.Fatal("not flushed after the write")
	}
}
