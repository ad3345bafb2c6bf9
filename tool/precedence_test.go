package tool_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestByPrecedence(t *testing.T) {
	tests := []struct {
		order, servers, want []string
	}{
		{order: nil, servers: []string{"c", "a", "b"}, want: []string{"a", "b", "c"}},
		{order: []string{"c", "a"}, servers: []string{"b", "a", "d", "c"}, want: []string{"c", "a", "b", "d"}},
		{order: []string{"z"}, servers: []string{"b", "a"}, want: []string{"a", "b"}}, // order names none of them
	}
	for _, tt := range tests {
		got := slices.Clone(tt.servers)
		slices.SortFunc(got, tool.ByPrecedence(tt.order))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("order %v: sorted %v (-want +got):\n%s", tt.order, tt.servers, diff)
		}
	}
}

func TestShadowedResources(t *testing.T) {
	r := tool.NewRegistry()
	mustPublishOffer(t, r, server("a", []string{"x://1", "x://2"}, []string{"x://{n}"}))
	mustPublishOffer(t, r, server("b", []string{"x://1", "b://only"}, []string{"x://{n}"}))
	mustPublishOffer(t, r, server("c", []string{"x://1", "x://2"}, []string{"c://{n}"}))
	tests := []struct {
		order []string
		want  []tool.Shadowed
	}{
		{order: nil, want: []tool.Shadowed{ // by name
			{Kind: "resource", Key: "x://1", Server: "b", KeptBy: "a"},
			{Kind: "resource", Key: "x://1", Server: "c", KeptBy: "a"},
			{Kind: "resource", Key: "x://2", Server: "c", KeptBy: "a"},
			{Kind: "resource template", Key: "x://{n}", Server: "b", KeptBy: "a"},
		}},
		{order: []string{"c", "b"}, want: []tool.Shadowed{
			{Kind: "resource", Key: "x://1", Server: "b", KeptBy: "c"},
			{Kind: "resource", Key: "x://1", Server: "a", KeptBy: "c"},
			{Kind: "resource", Key: "x://2", Server: "a", KeptBy: "c"},
			{Kind: "resource template", Key: "x://{n}", Server: "a", KeptBy: "b"},
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, r.ShadowedResources(tt.order)); diff != "" {
			t.Errorf("ShadowedResources(%v) (-want +got):\n%s", tt.order, diff)
		}
	}
	if got := tool.NewRegistry().ShadowedResources(nil); got != nil {
		t.Errorf("ShadowedResources of an empty registry = %v, want nil", got)
	}
}
