package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// The bridge carries tools/call results and tool schemas through byte for
// byte, so it captures the raw JSON of the responses it cares about beneath
// the SDK, keyed by JSON-RPC request id. How, and every assumption about
// SDK internals that takes, lives in internal/sdkwire; this file is the
// vocabulary the call path uses for it.

// captureSlot asks for the raw result of one call.
type captureSlot struct {
	replace bool // tools/call: hand the SDK an error in place of the result (sdkwire.CapturedCall)

	slot *sdkwire.Slot // set by withCapture
}

// withCapture returns ctx carrying slot, for the SDK call whose raw result
// slot should receive.
func withCapture(ctx context.Context, slot *captureSlot) context.Context {
	mode := sdkwire.PassResult
	if slot.replace {
		mode = sdkwire.CapturedCall
	}
	slot.slot = sdkwire.NewSlot(mode)
	return sdkwire.WithSlot(ctx, slot.slot)
}

func (s *captureSlot) result() (json.RawMessage, bool) { return s.slot.Result() }

func (s *captureSlot) refused() error { return s.slot.Refused() }

// captured reports whether err is how the SDK returns a tools/call whose
// result a replacing slot took (sdkwire.CapturedCall).
func captured(err error) bool { return sdkwire.Captured(err) }

// captureTable is the capture table of one connection.
type captureTable struct{ *sdkwire.Table }

func newCaptureTable(limit int64) *captureTable {
	return &captureTable{sdkwire.NewTable(limit)}
}

// forget drops slot's entry after its call returned.
func (t *captureTable) forget(slot *captureSlot) {
	if slot.slot != nil {
		t.Forget(slot.slot)
	}
}
