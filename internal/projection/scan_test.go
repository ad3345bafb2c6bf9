package projection

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValueEnd(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`123`, 3},
		{`-1.5e3,`, 6},
		{`true]`, 4},
		{"null ", 4},
		{`"a\"b" x`, 6},
		{`"\\" x`, 4},
		{`{"a":["}",{"b":"]"}]} x`, 21},
		{`[[],{}] x`, 7},
	}
	for _, tt := range tests {
		if got := valueEnd([]byte(tt.in), 0); got != tt.want {
			t.Errorf("valueEnd(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if got := skipSpace([]byte(" \t\r\n"), 0); got != 4 {
		t.Errorf("skipSpace over only whitespace = %d, want 4", got)
	}
}

// TestWalkersStopEarly checks the iterator contract: a consumer that breaks
// must not be called again.
func TestWalkersStopEarly(t *testing.T) {
	var keys []string
	for k, v := range members([]byte(`{"a":1, "b" : [2], "c":3}`)) {
		keys = append(keys, string(k)+"="+string(v))
		if len(keys) == 2 {
			break
		}
	}
	if diff := cmp.Diff([]string{`"a"=1`, `"b"=[2]`}, keys); diff != "" {
		t.Errorf("members with break (-want +got):\n%s", diff)
	}
	var elems []string
	for v := range elements([]byte(`[ 1 , {"x":[]} , "s" ]`)) {
		elems = append(elems, string(v))
		if len(elems) == 2 {
			break
		}
	}
	if diff := cmp.Diff([]string{`1`, `{"x":[]}`}, elems); diff != "" {
		t.Errorf("elements with break (-want +got):\n%s", diff)
	}
}
