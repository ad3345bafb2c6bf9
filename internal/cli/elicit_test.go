package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestElicitWithoutPerson(t *testing.T) {
	form := `{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer","default":36},"note":{"type":"string"}}}}`
	for _, c := range []struct{ mode, params, want, why string }{
		{"", form, `{"action":"decline"}`, "no terminal to ask at"}, // declined for want of a person: said
		{elicitDecline, form, `{"action":"decline"}`, ""},
		{elicitCancel, form, `{"action":"cancel"}`, ""},
		{elicitDefaults, form, `{"action":"accept","content":{"age":36,"name":"Ada"}}`, ""},
		// --elicit defaults says why it declines.
		{elicitDefaults, `{"mode":"url","url":"https://example.com/consent"}`, `{"action":"decline"}`, "--elicit defaults cannot open a URL"},
		{elicitDefaults, `{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`, `{"action":"decline"}`,
			"--elicit defaults: the form's defaults do not make a valid answer ("},
		{elicitDefaults, `{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":7}}}}`, `{"action":"decline"}`, "--elicit defaults cannot read the requested form: "},
	} {
		got, why, err := elicitWithoutPerson(c.mode, json.RawMessage(c.params))
		if err != nil || string(got) != c.want || !strings.HasPrefix(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("mode %q: %s, %q, %v; want %s, %q", c.mode, got, why, err, c.want, c.why)
		}
	}
	if _, _, err := elicitWithoutPerson(elicitDefaults, json.RawMessage(`[]`)); err == nil {
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
