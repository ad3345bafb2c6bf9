package elicitform

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each field kind reads what a person types, and refuses what does not
// fit, saying what to type; an empty line is the default, or left out, or
// required.
func TestRead(t *testing.T) {
	form, err := Parse([]byte(`{"type":"object","properties":{
		"n": {"type":"number"},
		"i": {"type":"integer","default":3},
		"b": {"type":"boolean"},
		"one": {"oneOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]},
		"some": {"type":"array","items":{"enum":["x","y"]}},
		"t": {"type":"string","maxLength":3}
	},"required":["t"]}`))
	if err != nil {
		t.Fatal(err)
	}
	field := map[string]*Field{}
	for _, f := range form.Fields {
		field[f.Name] = f
	}
	if d := cmp.Diff([]string{"n", "i", "b", "one", "some", "t"}, names(form)); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		field, line string
		want        any
		ok          bool
		wantErr     bool
	}{
		{"n", "2.5", 2.5, true, false},
		{"n", "two", nil, false, true},
		{"n", "", nil, false, false},
		{"i", "", float64(3), true, false},
		{"i", "7", float64(7), true, false},
		{"i", "7.5", nil, false, true},
		{"b", "no", false, true, false},
		{"b", "maybe", nil, false, true},
		{"one", "2", "b", true, false},
		{"one", "alpha", "a", true, false},
		{"one", "3", nil, false, true},
		{"some", "2, 1 2", []any{"y", "x"}, true, false},
		{"t", "abcd", nil, false, true},
	} {
		got, ok, err := field[c.field].Read(c.line)
		if d := cmp.Diff(c.want, got); d != "" || ok != c.ok || (err != nil) != c.wantErr {
			t.Errorf("%s %q: %v %v %v (-want +got value:\n%s)", c.field, c.line, got, ok, err, d)
		}
	}
	if _, _, err := field["t"].Read(" "); !errors.Is(err, ErrRequired) {
		t.Errorf("empty required field: %v", err)
	}
}

// A schema that is not one is refused with what is wrong.
func TestParseRefuses(t *testing.T) {
	for _, raw := range []string{`{"type": 7}`, `[1]`, `{"type":"object","properties":{"a":{"type":"string","default":}}}`} {
		if _, err := Parse([]byte(raw)); err == nil {
			t.Errorf("%s: parsed", raw)
		}
	}
}

func names(f *Form) []string {
	var out []string
	for _, field := range f.Fields {
		out = append(out, field.Name)
	}
	return out
}

// inf and nan parse as floats but are no JSON numbers: they are refused
// at the field, saying so, not by the encoder once the person confirmed.
func TestReadRefusesNonFiniteNumbers(t *testing.T) {
	form, err := Parse([]byte(`{"type":"object","properties":{"n":{"type":"number"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"inf", "-Infinity", "NaN", "+inf", "1e999"} {
		v, ok, err := form.Fields[0].Read(line)
		if err == nil || ok || !strings.Contains(err.Error(), "finite") {
			t.Errorf("Read(%q) = %v, %v, %v; want refused as not a finite number", line, v, ok, err)
		}
	}
}

// A choice's default is shown by the title its option is listed under,
// not by a value the list never shows.
func TestHintShowsTheDefaultsTitle(t *testing.T) {
	form, err := Parse([]byte(`{"type":"object","properties":{
		"hero": {"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Batman"}],"default":"hero-2"},
		"team": {"type":"array","items":{"anyOf":[{"const":"t1","title":"Red"},{"const":"t2","title":"Blue"}]},"default":["t1","t2"]},
		"size": {"type":"string","enum":["S","M"],"default":"M"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1-2 [Batman]", "some of 1-2, comma-separated [Red,Blue]", "1-2 [M]"}
	for i, f := range form.Fields {
		if got := f.Hint(); got != want[i] {
			t.Errorf("%s: hint %q, want %q", f.Name, got, want[i])
		}
	}
}
