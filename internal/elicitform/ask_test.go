package elicitform_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
	"github.com/mcpbridge/mcpbridge/internal/termio"
)

// A person answers a form and a URL at the prompts, or ends either with
// :decline, :cancel or the end of input; the server's text is escaped.
func TestAsk(t *testing.T) {
	form := `{"mode":"form","message":"Who?\u001b[2J","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","default":2}},"required":["name"]}}`
	url := `{"mode":"url","message":"Sign in","url":"https://example.com/auth"}`
	for _, c := range []struct {
		name, params, input, want, shown string
	}{
		{"form", form, "\nAda\n\ny\n", `{"action":"accept","content":{"n":2,"name":"Ada"}}`, "Who?\\x1b[2J"},
		{"declined", form, ":decline\n", elicitform.Decline, "name (required)"},
		{"cancelled by a no at the end", form, "Ada\n5\nc\n", elicitform.Cancel, "Send these answers?"},
		{"input ends", form, "Ada\n", elicitform.Cancel, ""},
		{"URL opened", url, "\n", `{"action":"accept"}`, "https://example.com/auth"},
		{"URL declined", url, "n\n", elicitform.Decline, ""},
		{"a form it cannot show", `{"requestedSchema":{"type":5}}`, "", elicitform.Decline, "cannot show"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			got, err := elicitform.Ask(context.Background(), termio.NewLineReader(strings.NewReader(c.input)), &out, "asker", json.RawMessage(c.params))
			if err != nil || string(got) != c.want {
				t.Errorf("answer %s, %v; want %s\nshown:\n%s", got, err, c.want, out.String())
			}
			if !strings.Contains(out.String(), c.shown) {
				t.Errorf("not shown %q:\n%s", c.shown, out.String())
			}
		})
	}
	if _, err := elicitform.Ask(context.Background(), termio.NewLineReader(strings.NewReader("")), &strings.Builder{}, "s", json.RawMessage(`[]`)); err == nil {
		t.Error("an elicitation that is not an object was answered")
	}
}
