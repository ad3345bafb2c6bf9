package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendEntry appends e as encoding/json would marshal it (the same bytes,
// which TestAppendEntryIsJSONMarshal holds it to) without reflection or
// allocations: the line is written on every call's path.
// prev is written as the entry's prev (e.Prev is not read): it needs no
// escaping.
func appendEntry(b []byte, e *Entry, prev []byte) ([]byte, error) {
	t, err := e.Time.AppendText(append(b, `{"time":"`...))
	if err != nil {
		return b, fmt.Errorf("the time: %w", err)
	}
	b = appendString(append(t, `","identity":`...), e.Identity)
	b = appendOmitEmpty(b, `,"client":`, e.Client)
	b = appendOmitEmpty(b, `,"session":`, e.Session)
	b = appendString(append(b, `,"method":`...), e.Method)
	b = appendString(append(b, `,"name":`...), e.Name)
	b = appendOmitEmpty(b, `,"server":`, e.Server)
	b = appendString(append(b, `,"outcome":`...), e.Outcome)
	b = appendOmitEmpty(b, `,"reason":`, e.Reason)
	if b, err = appendFloat(append(b, `,"durationMs":`...), e.Duration); err != nil {
		return b, err
	}
	b = appendOmitEmpty(b, `,"traceId":`, e.TraceID)
	if len(e.Args) > 0 {
		// Rare (args: full), and the arguments need compacting: as is.
		raw, err := json.Marshal(e.Args)
		if err != nil {
			return b, fmt.Errorf("the arguments: %w", err)
		}
		b = append(append(b, `,"args":`...), raw...)
	}
	if len(e.ArgKeys) > 0 {
		b = append(b, `,"argKeys":[`...)
		for i, k := range e.ArgKeys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
		}
		b = append(b, ']')
	}
	b = appendOmitEmpty(b, `,"argsHash":`, e.ArgsHash)
	b = appendOmitEmpty(b, `,"call":`, e.Call)
	b = appendOmitEmpty(b, `,"parent":`, e.Parent)
	b = append(append(b, `,"prev":"`...), prev...)
	return append(b, '"', '}'), nil
}

func appendOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendFloat formats f as encoding/json does a float64.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("the duration %v is not a JSON number", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it: control characters, quote and backslash, <, > and &, U+2028
// and U+2029, and invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
