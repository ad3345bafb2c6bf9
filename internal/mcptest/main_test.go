package mcptest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

func TestMain(m *testing.M) {
	mcppeer.RunIfChild()
	VerifyTestMain(m)
}

// waitLimit bounds every wait for an event; it only decides how long a
// broken test hangs before failing, never whether a working one passes.
const waitLimit = 20 * time.Second

func newClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcptest-test", Version: "0"}, opts)
}

// fakeTB records Fatal and Skip instead of ending the real test; run
// calls fn with it on a goroutine, as testing does, so Goexit is safe.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Skip(args ...any) {
	f.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

func runFake(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

// The peers these helpers talk to are tested in internal/mcppeer; the
// helpers below are the few of its tests' that the tests of the HTTP
// servers and third-party servers here need too.

func reply(id any, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}
