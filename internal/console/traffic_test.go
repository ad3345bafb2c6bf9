package console

import "testing"

// The traffic page tells ids apart by their random part: every task id of
// one replica starts "mcpbridge.REPLICA.", so cut to 12 characters they
// all read the same.
func TestShortIDs(t *testing.T) {
	for in, want := range map[string]string{
		"mcpbridge.KqPzhBx-gEE3.d3aeaa72eab13376adf3e9d75bcc62d9": "d3aeaa72eab1…",
		"d3aeaa72eab13376adf3e9d75bcc62d9":                        "d3aeaa72eab1…",
		"OQQCHWGPND37U56SXO7QGJB3PH":                              "OQQCHWGPND37…",
		"short":                                                   "short",
		"mcpbridge.notag":                                         "mcpbridge.no…",
	} {
		if got := short(in); got != want {
			t.Errorf("short(%q) = %q, want %q", in, got, want)
		}
	}
}
