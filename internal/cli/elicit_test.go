package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestElicitWithoutPerson(t *testing.T) {
	form := `{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer","default":36},"note":{"type":"string"}}}}`
	for _, c := range []struct{ mode, params, want string }{
		{"", form, `{"action":"decline"}`},
		{elicitDecline, form, `{"action":"decline"}`},
		{elicitCancel, form, `{"action":"cancel"}`},
		{elicitDefaults, form, `{"action":"accept","content":{"age":36,"name":"Ada"}}`},
		{elicitDefaults, `{"mode":"url","url":"https://example.com/consent"}`, `{"action":"decline"}`},
		{elicitDefaults, `{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`, `{"action":"decline"}`},
		{elicitDefaults, `{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":7}}}}`, `{"action":"decline"}`},
	} {
		got, err := elicitWithoutPerson(c.mode, json.RawMessage(c.params))
		if err != nil || string(got) != c.want {
			t.Errorf("mode %q: %s, %v; want %s", c.mode, got, err, c.want)
		}
	}
	if _, err := elicitWithoutPerson(elicitDefaults, json.RawMessage(`[]`)); err == nil {
		t.Error("an invalid request was answered")
	}
	e := &env{}
	if _, err := e.answer(context.Background(), tool.Ask{Method: tool.AskSample}); err == nil {
		t.Error("a sampling request was answered without a sampling configuration")
	}
	if err := checkElicitMode("always"); err == nil || !isUsage(err) {
		t.Errorf("--elicit always: %v, want a usage error", err)
	}
}
