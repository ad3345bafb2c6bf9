package projection

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Reasons an image becomes a diagnostic instead of an image (docs/upstream.md §4.5,
// §4.7). ReasonNoAttachmentStore is the one a bridge without an attachment
// store uses for valid images on a successful result.
const (
	ReasonNoAttachmentStore = "no attachment store is mounted"
	reasonNotAdmitted       = "this result was not admitted to durable model context"
	reasonBadMediaType      = "the declared media type is not PNG, JPEG, WebP, or GIF"
	reasonBadBase64         = "the image data is not canonical base64"
	reasonOtherInvalid      = "another image in the same result was invalid"
)

// Options adjust Project. The zero value is ready to use.
type Options struct {
	// RawName is the tool's raw MCP name, quoted in the text of a result
	// that has no model-visible content: "(<RawName> returned no
	// model-visible content)".
	RawName string
	// ImageReason is the diagnostic reason for the images of a successful
	// result whose images all decode cleanly; empty means
	// ReasonNoAttachmentStore. Malformed images and error results always
	// get their own upstream reasons.
	ImageReason string
}

// Result is the projection of one raw tools/call result.
type Result struct {
	// IsError is true when the result's isError is exactly true: the call
	// fails with Text as its message.
	IsError bool
	// Text is the render: Blocks joined by "\n" (docs/upstream.md §4.6).
	Text string
	// Blocks are the projected text blocks before joining: text runs and
	// image diagnostics as separate blocks, which is the final model view
	// when no attachment store is mounted (docs/upstream.md §4.7, last paragraph).
	Blocks []string
	// Value is the canonical value, nil when IsError. Modern shape:
	// {"content":<content bytes as received>} plus ,"structuredContent":<bytes
	// as received> when that key is present (even null). Legacy shape:
	// {"content":[{"type":"text","text":<Text>}]} plus structuredContent.
	Value json.RawMessage
	// StructuredContent is the structuredContent value as received, nil when
	// the key is absent, `null` when present and null; set on error results
	// too. It never aliases the input.
	StructuredContent json.RawMessage
	// HasStructured reports whether the structuredContent key is present.
	HasStructured bool
}

// Project maps the raw JSON of a tools/call result to its model text and
// canonical value, following docs/upstream.md §4.4 and §4.6 word for word. It fails
// only when raw is not a JSON object; anything inside the object, however
// odd, is projected. Project does not retain or modify raw. Where upstream
// leaks JavaScript stringification, Project chooses:
//
//   - a text block whose text is not a string shows its compact JSON, and
//     null shows as "" (docs/upstream.md §9.2 item 12);
//   - a non-string type, mimeType or legacy toolResult shows its compact
//     JSON as received (whitespace dropped; key order, number text and
//     string escapes kept); a missing type shows as "undefined", as upstream;
//   - a mimeType that is missing, null or "" shows as "unknown media type";
//   - a resource_link needs name and uri to be non-empty strings.
func Project(raw json.RawMessage, opts Options) (Result, error) {
	top, err := readTop(raw)
	if err != nil {
		return Result{}, err
	}
	res := Result{IsError: top.failed(), HasStructured: top.structured != nil}
	var value []byte
	if len(top.content) > 0 && top.content[0] == '[' {
		res.Blocks = projectContent(top.content, res.IsError, opts)
		value = make([]byte, 0, len(`{"content":,"structuredContent":}`)+len(top.content)+len(top.structured))
		value = append(value, `{"content":`...)
		value = append(value, top.content...)
	} else {
		text := "(no output)"
		if top.toolResult != nil {
			text = compact(top.toolResult)
		}
		res.Blocks = []string{text}
		value = append(value, `{"content":[{"type":"text","text":`...)
		value = appendJSONString(value, text)
		value = append(value, "}]"...)
	}
	if top.structured != nil {
		value = append(value, `,"structuredContent":`...)
		start := len(value)
		value = append(value, top.structured...)
		res.StructuredContent = value[start:len(value):len(value)]
	}
	value = append(value, '}')
	if !res.IsError {
		res.Value = value[:len(value):len(value)]
	}
	res.Text = strings.Join(res.Blocks, "\n")
	return res, nil
}

// Head is what Inspect reads of a tools/call result.
type Head struct {
	// IsError is Result.IsError.
	IsError bool
	// StructuredContent is Result.StructuredContent, but it aliases the
	// input: nil when the key is absent, `null` when present and null.
	StructuredContent json.RawMessage
	// HasStructured is Result.HasStructured.
	HasStructured bool
}

// Inspect checks raw as Project does, failing exactly when Project fails
// and with its error, and reads what a consumer that forwards the result
// as it came still needs of it, without building the model view.
func Inspect(raw json.RawMessage) (Head, error) {
	top, err := readTop(raw)
	if err != nil {
		return Head{}, err
	}
	return Head{IsError: top.failed(), StructuredContent: top.structured, HasStructured: top.structured != nil}, nil
}

// readTop is parseTop with the error Project and Inspect return.
func readTop(raw []byte) (top, error) {
	t, err := parseTop(raw)
	if err != nil {
		return top{}, fmt.Errorf("projecting tools/call result: %w", err)
	}
	return t, nil
}

// failed reports whether the result's isError is exactly true.
func (t top) failed() bool { return string(t.isError) == "true" }

// top holds the raw values of the result members Project reads; nil means
// absent (a present value is never empty).
type top struct {
	content, isError, toolResult, structured []byte
}

// parseTop checks that raw is a JSON object and picks out its members. A
// repeated key keeps its last value, as JSON.parse does.
func parseTop(raw []byte) (top, error) {
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v) // only to say what is wrong and where
		if err == nil {
			err = errors.New("invalid JSON") // unreachable: json.Valid and Unmarshal agree
		}
		return top{}, fmt.Errorf("result is not valid JSON: %w", err)
	}
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return top{}, fmt.Errorf("result is a JSON %s, want an object", kind(raw[i]))
	}
	obj := raw[i:valueEnd(raw, i)]
	var t top
	for k, v := range members(obj) {
		switch {
		case keyIs(k, "content"):
			t.content = v
		case keyIs(k, "isError"):
			t.isError = v
		case keyIs(k, "toolResult"):
			t.toolResult = v
		case keyIs(k, "structuredContent"):
			t.structured = v
		}
	}
	return t, nil
}

// kind names the JSON type of a value by its first byte.
func kind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	default:
		return "number"
	}
}

// item is one content entry's contribution to the model view: a text line,
// or an image whose diagnostic waits for the batch verdict.
type item struct {
	text    string
	isImage bool
	mime    string // the media type as shown in the diagnostic
	fail    string // the strict-decode reason, "" when the image is valid
}

// projectContent walks the content array (docs/upstream.md §4.6) and returns the
// blocks: pending text lines are joined by "\n" and flushed at each image
// and at the end.
func projectContent(content []byte, isError bool, opts Options) []string {
	var items []item
	anyFail := false
	budget, used, unshown := viewBudget(len(content)), 0, 0
	for elem := range elements(content) {
		if used > budget {
			unshown++
			continue
		}
		it, ok := projectEntry(elem)
		if !ok {
			continue
		}
		if it.isImage && it.fail != "" {
			anyFail = true
		}
		items = append(items, it)
		used += len(it.text) + len(it.mime) + len(it.fail) + 1 // and its line break
		if it.isImage {
			used += imageLine
		}
	}
	if unshown > 0 {
		items = append(items, item{text: fmt.Sprintf("[%d more content blocks not shown: the view of this result outgrew twice its size]", unshown)})
	}
	if len(items) == 0 {
		return []string{"(" + opts.RawName + " returned no model-visible content)"}
	}

	okReason := opts.ImageReason
	if okReason == "" {
		okReason = ReasonNoAttachmentStore
	}
	var blocks, pending []string
	flush := func() {
		if len(pending) > 0 {
			blocks = append(blocks, strings.Join(pending, "\n"))
			pending = pending[:0]
		}
	}
	for _, it := range items {
		if !it.isImage {
			pending = append(pending, it.text)
			continue
		}
		// docs/upstream.md §4.4: an error result fails before any image handling;
		// §4.7 step 1: one bad image spoils the whole batch.
		reason := okReason
		switch {
		case isError:
			reason = reasonNotAdmitted
		case it.fail != "":
			reason = it.fail
		case anyFail:
			reason = reasonOtherInvalid
		}
		flush()
		blocks = append(blocks, "[image unavailable: "+it.mime+"; "+reason+"; raw image data remains available to programmatic callers]")
	}
	flush()
	return blocks
}

// viewBudget bounds the view of a content array of n bytes: twice its
// size and 64 KiB more. A text is never longer than its JSON, but an
// entry's diagnostic is (a 2-byte 0 gives 52), so a hostile result at the
// size cap of 16 MiB could otherwise make a view of half a gigabyte.
func viewBudget(n int) int { return 2*n + 64<<10 }

// imageLine bounds what an image's diagnostic adds to its media type: the
// line's words and the longest reason.
const imageLine = 200

// projectEntry projects one content entry; ok is false when the entry adds
// nothing (a text block without text).
func projectEntry(elem []byte) (it item, ok bool) {
	if elem[0] != '{' {
		return item{text: "[unsupported MCP content block: expected an object]"}, true
	}
	b := readBlock(elem)
	switch {
	case b.typ == nil:
		return item{text: "[unsupported MCP content type: undefined]"}, true
	case !isString(b.typ):
		return item{text: "[unsupported MCP content type: " + compact(b.typ) + "]"}, true
	}
	return projectTyped(decodeString(b.typ), b)
}

// block holds the raw JSON values of the members of a content entry that
// projection reads; nil when absent. A repeated key counts last.
type block struct {
	typ, text, mimeType, data, name, uri []byte
}

// readBlock reads the members of the object elem.
func readBlock(elem []byte) block {
	var b block
	for k, v := range members(elem) {
		if dst := b.member(k); dst != nil {
			*dst = v
		}
	}
	return b
}

// member returns where the member called key goes, or nil for a member
// projection ignores.
func (b *block) member(key []byte) *[]byte {
	switch {
	case keyIs(key, "type"):
		return &b.typ
	case keyIs(key, "text"):
		return &b.text
	case keyIs(key, "mimeType"):
		return &b.mimeType
	case keyIs(key, "data"):
		return &b.data
	case keyIs(key, "name"):
		return &b.name
	case keyIs(key, "uri"):
		return &b.uri
	}
	return nil
}

// projectTyped projects a block whose type is the string typ.
func projectTyped(typ string, b block) (item, bool) {
	switch typ {
	case "text":
		return projectText(b.text)
	case "image":
		return item{isImage: true, mime: showMediaType(b.mimeType), fail: imageFailure(b.mimeType, b.data)}, true
	case "resource_link":
		return item{text: resourceLinkLine(b.name, b.uri)}, true
	case "audio":
		return item{text: "[audio result unsupported: " + showMediaType(b.mimeType) + "; raw audio data remains available to programmatic callers]"}, true
	case "resource":
		return item{text: "[embedded resource unsupported; raw resource data remains available to programmatic callers]"}, true
	default:
		return item{text: "[unsupported MCP content type: " + typ + "]"}, true
	}
}

// projectText projects a text block's text member; ok is false when it has
// none.
func projectText(text []byte) (it item, ok bool) {
	switch {
	case text == nil:
		return item{}, false
	case isString(text):
		return item{text: decodeString(text)}, true
	case string(text) == "null":
		return item{text: ""}, true
	default:
		return item{text: compact(text)}, true
	}
}

// resourceLinkLine is a resource_link block's line.
func resourceLinkLine(name, uri []byte) string {
	if isString(name) && isString(uri) {
		n, u := decodeString(name), decodeString(uri)
		if n != "" && u != "" {
			return "Resource link: " + n + " (" + u + ")"
		}
	}
	return "[resource link unavailable: the MCP block is missing its name or URI]"
}

// showMediaType is a block's mimeType as a diagnostic shows it.
func showMediaType(mimeType []byte) string {
	switch {
	case len(mimeType) == 0 || string(mimeType) == "null" || string(mimeType) == `""`:
		return "unknown media type"
	case isString(mimeType):
		return decodeString(mimeType) // not "": only `""` decodes to that
	default:
		return compact(mimeType)
	}
}

// imageFailure is docs/upstream.md §4.7 step 1 for one image block: the reason it
// cannot be decoded strictly, or "" when it can.
func imageFailure(mimeType, data []byte) string {
	if !isString(mimeType) {
		return reasonBadMediaType
	}
	switch decodeString(mimeType) {
	case "image/png", "image/jpeg", "image/webp", "image/gif":
	default:
		return reasonBadMediaType
	}
	if !isString(data) || !canonicalBase64(decodeString(data)) {
		return reasonBadBase64
	}
	return ""
}

// canonicalBase64 reports whether s is standard, padded RFC 4648 base64 that
// re-encodes to itself: no whitespace, no URL-safe alphabet, and zero pad
// bits (so "AB==" is refused, "AQ==" accepted). It checks in place rather
// than decoding, so a large image costs no copy.
func canonicalBase64(s string) bool {
	n := len(s)
	if n%4 != 0 {
		return false
	}
	if n == 0 {
		return true
	}
	pad := 0
	if s[n-1] == '=' {
		pad = 1
		if s[n-2] == '=' {
			pad = 2
		}
	}
	for i := range n - pad {
		if b64Value(s[i]) < 0 {
			return false
		}
	}
	switch pad {
	case 1: // two bytes in three characters: the last one's low 2 bits are padding
		return b64Value(s[n-2])&0x3 == 0
	case 2: // one byte in two characters: the last one's low 4 bits are padding
		return b64Value(s[n-3])&0xF == 0
	}
	return true
}

// b64Value is the 6-bit value of a standard base64 character, -1 if c is
// not one.
func b64Value(c byte) int {
	switch {
	case 'A' <= c && c <= 'Z':
		return int(c - 'A')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 26
	case '0' <= c && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
