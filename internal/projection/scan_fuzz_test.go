package projection

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzScan checks the zero-copy JSON walkers (Members, Elements, KeyIs,
// DecodeString, Depth, and so valueEnd and stringEnd) against encoding/json
// on every valid input the fuzzer makes.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `1`, `null`,
		` { "a" : 1 , "b" : [ true , false , null ] , "c" : { } } `,
		`{"a":"}","b":"]","c":"\"","d":"\\"}`,
		`["\u0074ype",{"\u0074ype":"text"},[[["x"]]],-1.5e+3,"\ud800","\udc00\ud800x"]`,
		`{"type":"text","text":"hello"}`,
		`{"a":1,"a":2}`,
		"{\"\xff\":\"\xc3\x28\"}",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`,
		// Invalid, skipped: the seeds mutate into valid JSON.
		`{`, `[`, `{"a"`, `{"a":`, `{"a":1,`, `[1,`, `["\`, `{"\`, `{,}`, `[,]`, `{"a" 1}`, `[}`, `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The walkers' contract is valid JSON: on other input they may
		// panic, which their callers in internal/sdkwire recover from.
		if !json.Valid(b) {
			return
		}
		v := bytes.Trim(b, " \t\r\n")
		if got, want := Depth(v), jsonDepth(t, v); got != want {
			t.Errorf("Depth(%s) = %d, want %d", v, got, want)
		}
		checkValue(t, v)
	})
}

// checkValue compares the walkers with encoding/json on the valid value v
// (no surrounding space), recursively.
func checkValue(t *testing.T, v []byte) {
	if end := valueEnd(v, 0); end != len(v) {
		t.Fatalf("valueEnd(%s) = %d, want %d", v, end, len(v))
	}
	switch v[0] {
	case '"':
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if got := DecodeString(v); got != want {
			t.Errorf("DecodeString(%s) = %q, want %q", v, got, want)
		}
	case '{':
		dec := json.NewDecoder(bytes.NewReader(v))
		token(t, dec) // {
		for k, val := range Members(v) {
			if !dec.More() {
				t.Fatalf("Members(%s) yields more members than encoding/json finds", v)
			}
			key := token(t, dec).(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if got := DecodeString(k); got != key {
				t.Errorf("key %s decodes to %q, want %q", k, got, key)
			}
			if !KeyIs(k, key) || KeyIs(k, key+"x") {
				t.Errorf("KeyIs(%s, %q) wrong", k, key)
			}
			if !bytes.Equal(compactJSON(t, val), compactJSON(t, raw)) {
				t.Errorf("member %q: value %s, want %s", key, val, raw)
			}
			checkValue(t, val)
		}
		if dec.More() {
			t.Errorf("Members(%s) misses members", v)
		}
	case '[':
		dec := json.NewDecoder(bytes.NewReader(v))
		token(t, dec) // [
		for val := range Elements(v) {
			if !dec.More() {
				t.Fatalf("Elements(%s) yields more elements than encoding/json finds", v)
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(compactJSON(t, val), compactJSON(t, raw)) {
				t.Errorf("element %s, want %s", val, raw)
			}
			checkValue(t, val)
		}
		if dec.More() {
			t.Errorf("Elements(%s) misses elements", v)
		}
	}
}

func token(t *testing.T, dec *json.Decoder) json.Token {
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func compactJSON(t *testing.T, v []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return buf.Bytes()
}

// jsonDepth is Depth by encoding/json's tokens.
func jsonDepth(t *testing.T, v []byte) int {
	dec := json.NewDecoder(bytes.NewReader(v))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
