package jsonorder_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/jsonorder"
)

func TestMembers(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`{"z": 1, "a": {"y": 2, "b": 3}, "m": [1]}`, []string{"z", "a", "m"}},
		{`[1, 2]`, nil},
		{`"text"`, nil},
		{``, nil},
		{`{"z": 1, "a": }`, []string{"z"}},
	}
	for _, c := range cases {
		var got []string
		for _, m := range jsonorder.Members(json.RawMessage(c.in)) {
			got = append(got, m.Name)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Members(%s) (-want +got):\n%s", c.in, diff)
		}
	}
	if m := jsonorder.Members(json.RawMessage(`{"a": {"b": 1}}`)); string(m[0].Value) != `{"b": 1}` {
		t.Errorf("the member's value is %s, want it as written", m[0].Value)
	}
}
