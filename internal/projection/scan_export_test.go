package projection

import "testing"

func TestDepth(t *testing.T) {
	for in, want := range map[string]int{
		`1`:                     0,
		`"[{"`:                  0,
		`{}`:                    1,
		`[1,[2,{"a":"]]"}],[]]`: 3,
		`{"a":[[["\"["]]]}`:     4,
	} {
		if got := Depth([]byte(in)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", in, got, want)
		}
	}
}
