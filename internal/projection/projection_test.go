package projection

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Diagnostic texts spelled out in full, as upstream's tests do.
const (
	unsupportedBlock = "[unsupported MCP content block: expected an object]"
	pngNoStore       = "[image unavailable: image/png; no attachment store is mounted; raw image data remains available to programmatic callers]"
	pngNotAdmitted   = "[image unavailable: image/png; this result was not admitted to durable model context; raw image data remains available to programmatic callers]"
	pngOtherInvalid  = "[image unavailable: image/png; another image in the same result was invalid; raw image data remains available to programmatic callers]"
	pngBadBase64     = "[image unavailable: image/png; the image data is not canonical base64; raw image data remains available to programmatic callers]"
	tinyPNG          = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

// value is a shorthand for an expected canonical value.
func value(s string) json.RawMessage { return json.RawMessage(s) }

func TestProject(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		opts Options
		want Result
	}{
		// docs/upstream.md §8.2 tool execution.
		{
			name: "34 single text block",
			raw:  `{"content":[{"type":"text","text":"hello world"}]}`,
			want: Result{Text: "hello world", Blocks: []string{"hello world"}, Value: value(`{"content":[{"type":"text","text":"hello world"}]}`)},
		},
		{
			name: "36 two text blocks render as one",
			raw:  `{"content":[{"type":"text","text":"line1"},{"type":"text","text":"line2"}]}`,
			want: Result{Text: "line1\nline2", Blocks: []string{"line1\nline2"}, Value: value(`{"content":[{"type":"text","text":"line1"},{"type":"text","text":"line2"}]}`)},
		},
		{
			name: "37 ordered mixed images without a store keep text runs apart",
			raw:  `{"content":[{"type":"text","text":"before"},{"type":"image","mimeType":"image/png","data":"AQ==","annotations":{"audience":["user"]}},{"type":"text","text":"between"},{"type":"image","mimeType":"image/jpeg","data":"Ag=="},{"type":"text","text":"after"}]}`,
			want: Result{
				Text: "before\n" + pngNoStore + "\nbetween\n[image unavailable: image/jpeg; no attachment store is mounted; raw image data remains available to programmatic callers]\nafter",
				Blocks: []string{
					"before", pngNoStore, "between",
					"[image unavailable: image/jpeg; no attachment store is mounted; raw image data remains available to programmatic callers]",
					"after",
				},
				Value: value(`{"content":[{"type":"text","text":"before"},{"type":"image","mimeType":"image/png","data":"AQ==","annotations":{"audience":["user"]}},{"type":"text","text":"between"},{"type":"image","mimeType":"image/jpeg","data":"Ag=="},{"type":"text","text":"after"}]}`),
			},
		},
		{
			name: "38 no attachment store",
			raw:  `{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="}]}`,
			want: Result{Text: pngNoStore, Blocks: []string{pngNoStore}, Value: value(`{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="}]}`)},
		},
		{
			name: "39 malformed batch is atomic",
			raw:  `{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"image","mimeType":"image/png","data":"not base64"}]}`,
			want: Result{
				Text:   pngOtherInvalid + "\n" + pngBadBase64,
				Blocks: []string{pngOtherInvalid, pngBadBase64},
				Value:  value(`{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"image","mimeType":"image/png","data":"not base64"}]}`),
			},
		},
		{
			name: "40 non-canonical and incomplete images",
			raw:  `{"content":[{"type":"image","mimeType":"image/tiff","data":"AQ=="},{"type":"image","mimeType":"image/png","data":"AB=="},{"type":"image","mimeType":"image/png"}]}`,
			want: Result{
				Text: "[image unavailable: image/tiff; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]\n" + pngBadBase64 + "\n" + pngBadBase64,
				Blocks: []string{
					"[image unavailable: image/tiff; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]",
					pngBadBase64, pngBadBase64,
				},
				Value: value(`{"content":[{"type":"image","mimeType":"image/tiff","data":"AQ=="},{"type":"image","mimeType":"image/png","data":"AB=="},{"type":"image","mimeType":"image/png"}]}`),
			},
		},
		{
			name: "47 primitive blocks",
			raw:  `{"content":[42, null, ["nested"]]}`,
			want: Result{
				Text:   unsupportedBlock + "\n" + unsupportedBlock + "\n" + unsupportedBlock,
				Blocks: []string{unsupportedBlock + "\n" + unsupportedBlock + "\n" + unsupportedBlock},
				Value:  value(`{"content":[42, null, ["nested"]]}`),
			},
		},
		{
			name: "48 structured content is carried",
			raw:  `{"content":[{"type":"text","text":"42"}],"structuredContent":{"answer":42}}`,
			want: Result{
				Text: "42", Blocks: []string{"42"},
				Value:             value(`{"content":[{"type":"text","text":"42"}],"structuredContent":{"answer":42}}`),
				StructuredContent: value(`{"answer":42}`), HasStructured: true,
			},
		},
		{
			name: "49 empty content with structured content",
			raw:  `{"content":[],"structuredContent":["kept",{"nested":true}]}`,
			opts: Options{RawName: "future-schema"},
			want: Result{
				Text: "(future-schema returned no model-visible content)", Blocks: []string{"(future-schema returned no model-visible content)"},
				Value:             value(`{"content":[],"structuredContent":["kept",{"nested":true}]}`),
				StructuredContent: value(`["kept",{"nested":true}]`), HasStructured: true,
			},
		},
		{
			name: "50 isError fails with the text and no value",
			raw:  `{"content":[{"type":"text","text":"something went wrong"}],"isError":true}`,
			want: Result{IsError: true, Text: "something went wrong", Blocks: []string{"something went wrong"}},
		},
		{
			name: "53 legacy toolResult object",
			raw:  `{"toolResult":{"key":"value"}}`,
			want: Result{Text: `{"key":"value"}`, Blocks: []string{`{"key":"value"}`}, Value: value(`{"content":[{"type":"text","text":"{\"key\":\"value\"}"}]}`)},
		},
		{
			name: "54 legacy string toolResult with structured content",
			raw:  `{"toolResult":"legacy","structuredContent":{"answer":42}}`,
			want: Result{
				Text: `"legacy"`, Blocks: []string{`"legacy"`},
				Value:             value(`{"content":[{"type":"text","text":"\"legacy\""}],"structuredContent":{"answer":42}}`),
				StructuredContent: value(`{"answer":42}`), HasStructured: true,
			},
		},
		{
			name: "55 legacy isError",
			raw:  `{"toolResult":{"reason":"nope"},"isError":true}`,
			want: Result{IsError: true, Text: `{"reason":"nope"}`, Blocks: []string{`{"reason":"nope"}`}},
		},
		// docs/upstream.md §8.2 edge cases (no attachment store).
		{
			name: "56 audio",
			raw:  `{"content":[{"type":"audio","mimeType":"audio/mp3","data":"AQ=="}]}`,
			want: Result{
				Text:   "[audio result unsupported: audio/mp3; raw audio data remains available to programmatic callers]",
				Blocks: []string{"[audio result unsupported: audio/mp3; raw audio data remains available to programmatic callers]"},
				Value:  value(`{"content":[{"type":"audio","mimeType":"audio/mp3","data":"AQ=="}]}`),
			},
		},
		{
			name: "57 embedded resource",
			raw:  `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`,
			want: Result{
				Text:   "[embedded resource unsupported; raw resource data remains available to programmatic callers]",
				Blocks: []string{"[embedded resource unsupported; raw resource data remains available to programmatic callers]"},
				Value:  value(`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`),
			},
		},
		{
			name: "58 resource link",
			raw:  `{"content":[{"type":"resource_link","name":"Design","uri":"https://example.test/design"}]}`,
			want: Result{
				Text: "Resource link: Design (https://example.test/design)", Blocks: []string{"Resource link: Design (https://example.test/design)"},
				Value: value(`{"content":[{"type":"resource_link","name":"Design","uri":"https://example.test/design"}]}`),
			},
		},
		{
			name: "59 resource link without uri",
			raw:  `{"content":[{"type":"resource_link","name":"Design"}]}`,
			want: Result{
				Text:   "[resource link unavailable: the MCP block is missing its name or URI]",
				Blocks: []string{"[resource link unavailable: the MCP block is missing its name or URI]"},
				Value:  value(`{"content":[{"type":"resource_link","name":"Design"}]}`),
			},
		},
		{
			name: "60 unknown type",
			raw:  `{"content":[{"type":"video","url":"x"}]}`,
			want: Result{Text: "[unsupported MCP content type: video]", Blocks: []string{"[unsupported MCP content type: video]"}, Value: value(`{"content":[{"type":"video","url":"x"}]}`)},
		},
		{
			name: "61 image without mimeType",
			raw:  `{"content":[{"type":"image","data":"AQ=="}]}`,
			want: Result{
				Text:   "[image unavailable: unknown media type; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]",
				Blocks: []string{"[image unavailable: unknown media type; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]"},
				Value:  value(`{"content":[{"type":"image","data":"AQ=="}]}`),
			},
		},
		{
			name: "62 audio without mimeType",
			raw:  `{"content":[{"type":"audio","data":"AQ=="}]}`,
			want: Result{
				Text:   "[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]",
				Blocks: []string{"[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]"},
				Value:  value(`{"content":[{"type":"audio","data":"AQ=="}]}`),
			},
		},
		{
			name: "63 text block without text",
			raw:  `{"content":[{"type":"text"}]}`,
			opts: Options{RawName: "notext"},
			want: Result{Text: "(notext returned no model-visible content)", Blocks: []string{"(notext returned no model-visible content)"}, Value: value(`{"content":[{"type":"text"}]}`)},
		},
		{
			name: "64 empty content",
			raw:  `{"content":[]}`,
			opts: Options{RawName: "empty_tool"},
			want: Result{Text: "(empty_tool returned no model-visible content)", Blocks: []string{"(empty_tool returned no model-visible content)"}, Value: value(`{"content":[]}`)},
		},
		{
			// Test 65's "toolResult present but undefined" cannot be written
			// in JSON; a result with neither key is its only JSON form.
			name: "65/66 neither content nor toolResult",
			raw:  `{}`,
			want: Result{Text: "(no output)", Blocks: []string{"(no output)"}, Value: value(`{"content":[{"type":"text","text":"(no output)"}]}`)},
		},
		{
			name: "67 isError with only an image",
			raw:  `{"content":[{"type":"image","mimeType":"image/png"}],"isError":true}`,
			want: Result{IsError: true, Text: pngNotAdmitted, Blocks: []string{pngNotAdmitted}},
		},
		// docs/upstream.md §8.4, the fixture server's results as projection cases.
		{
			name: "104 dotted tool",
			raw:  `{"content":[{"type":"text","text":"reset done"}]}`,
			want: Result{Text: "reset done", Blocks: []string{"reset done"}, Value: value(`{"content":[{"type":"text","text":"reset done"}]}`)},
		},
		{
			name: "105 add",
			raw:  `{"content":[{"type":"text","text":"5"}]}`,
			want: Result{Text: "5", Blocks: []string{"5"}, Value: value(`{"content":[{"type":"text","text":"5"}]}`)},
		},
		{
			name: "106 greet",
			raw:  `{"content":[{"type":"text","text":"Hello, World!"}]}`,
			want: Result{Text: "Hello, World!", Blocks: []string{"Hello, World!"}, Value: value(`{"content":[{"type":"text","text":"Hello, World!"}]}`)},
		},
		{
			name: "107 fail",
			raw:  `{"content":[{"type":"text","text":"fixture failure"}],"isError":true}`,
			want: Result{IsError: true, Text: "fixture failure", Blocks: []string{"fixture failure"}},
		},
		{
			name: "108 image between text, no store",
			raw:  `{"content":[{"type":"text","text":"Here is an image:"},{"type":"image","data":"` + tinyPNG + `","mimeType":"image/png"},{"type":"text","text":"End of image."}]}`,
			want: Result{
				Text:   "Here is an image:\n" + pngNoStore + "\nEnd of image.",
				Blocks: []string{"Here is an image:", pngNoStore, "End of image."},
				Value:  value(`{"content":[{"type":"text","text":"Here is an image:"},{"type":"image","data":"` + tinyPNG + `","mimeType":"image/png"},{"type":"text","text":"End of image."}]}`),
			},
		},
		// docs/upstream.md §4.6 render example on the error path.
		{
			name: "error path image between text",
			raw:  `{"isError":true,"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"text","text":"b"}]}`,
			want: Result{IsError: true, Text: "a\n" + pngNotAdmitted + "\nb", Blocks: []string{"a", pngNotAdmitted, "b"}},
		},
		{
			name: "error path ignores strict decode",
			raw:  `{"isError":true,"content":[{"type":"image","mimeType":"image/png","data":"AB=="},{"type":"image","mimeType":"image/png","data":"AQ=="}]}`,
			want: Result{IsError: true, Text: pngNotAdmitted + "\n" + pngNotAdmitted, Blocks: []string{pngNotAdmitted, pngNotAdmitted}},
		},
		{
			name: "error with empty content",
			raw:  `{"isError":true,"content":[]}`,
			opts: Options{RawName: "t"},
			want: Result{IsError: true, Text: "(t returned no model-visible content)", Blocks: []string{"(t returned no model-visible content)"}},
		},
		{
			name: "error keeps structured content but no value",
			raw:  `{"isError":true,"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`,
			want: Result{IsError: true, Text: "x", Blocks: []string{"x"}, StructuredContent: value(`{"a":1}`), HasStructured: true},
		},
		// Our decisions and the corners of the table.
		{
			name: "empty string text is content",
			raw:  `{"content":[{"type":"text","text":""}]}`,
			opts: Options{RawName: "t"},
			want: Result{Text: "", Blocks: []string{""}, Value: value(`{"content":[{"type":"text","text":""}]}`)},
		},
		{
			name: "non-string texts show compact JSON, null shows empty",
			raw:  `{"content":[{"type":"text","text":42},{"type":"text","text":{ "a" : [1, 2] }},{"type":"text","text":null},{"type":"text","text":true}]}`,
			want: Result{
				Text: "42\n{\"a\":[1,2]}\n\ntrue", Blocks: []string{"42\n{\"a\":[1,2]}\n\ntrue"},
				Value: value(`{"content":[{"type":"text","text":42},{"type":"text","text":{ "a" : [1, 2] }},{"type":"text","text":null},{"type":"text","text":true}]}`),
			},
		},
		{
			name: "missing and non-string types",
			raw:  `{"content":[{"text":"x"},{"type":42},{"type":null},{"type":{"k": "v"}}]}`,
			want: Result{
				Text:   "[unsupported MCP content type: undefined]\n[unsupported MCP content type: 42]\n[unsupported MCP content type: null]\n[unsupported MCP content type: {\"k\":\"v\"}]",
				Blocks: []string{"[unsupported MCP content type: undefined]\n[unsupported MCP content type: 42]\n[unsupported MCP content type: null]\n[unsupported MCP content type: {\"k\":\"v\"}]"},
				Value:  value(`{"content":[{"text":"x"},{"type":42},{"type":null},{"type":{"k": "v"}}]}`),
			},
		},
		{
			name: "keys match exactly, after unescaping",
			raw:  `{"content":[{"Type":"text","text":"upper"},{"\u0074ype":"text","t\u0065xt":"esc\u00e9"}]}`,
			want: Result{
				Text: "[unsupported MCP content type: undefined]\nescé", Blocks: []string{"[unsupported MCP content type: undefined]\nescé"},
				Value: value(`{"content":[{"Type":"text","text":"upper"},{"\u0074ype":"text","t\u0065xt":"esc\u00e9"}]}`),
			},
		},
		{
			name: "repeated keys keep the last value",
			raw:  `{"content":"legacy?","content":[{"type":"video","type":"text","text":"a","text":"b"}],"isError":true,"isError":false}`,
			want: Result{Text: "b", Blocks: []string{"b"}, Value: value(`{"content":[{"type":"video","type":"text","text":"a","text":"b"}]}`)},
		},
		{
			name: "mimeType corners",
			raw:  `{"content":[{"type":"audio","mimeType":null},{"type":"audio","mimeType":""},{"type":"audio","mimeType":"\u0000"},{"type":"audio","mimeType":7},{"type":"audio","mimeType":"\"\""}]}`,
			want: Result{
				Text: "[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: \x00; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: 7; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: \"\"; raw audio data remains available to programmatic callers]",
				Blocks: []string{"[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: \x00; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: 7; raw audio data remains available to programmatic callers]\n" +
					"[audio result unsupported: \"\"; raw audio data remains available to programmatic callers]"},
				Value: value(`{"content":[{"type":"audio","mimeType":null},{"type":"audio","mimeType":""},{"type":"audio","mimeType":"\u0000"},{"type":"audio","mimeType":7},{"type":"audio","mimeType":"\"\""}]}`),
			},
		},
		{
			name: "escaped mimeTypes are unescaped",
			raw:  `{"content":[{"type":"audio","mimeType":"\u200b"},{"type":"audio","mimeType":"\/"}]}`,
			want: Result{
				Text:   "[audio result unsupported: \u200b; raw audio data remains available to programmatic callers]\n[audio result unsupported: /; raw audio data remains available to programmatic callers]",
				Blocks: []string{"[audio result unsupported: \u200b; raw audio data remains available to programmatic callers]\n[audio result unsupported: /; raw audio data remains available to programmatic callers]"},
				Value:  value(`{"content":[{"type":"audio","mimeType":"\u200b"},{"type":"audio","mimeType":"\/"}]}`),
			},
		},
		{
			name: "resource link corners",
			raw:  `{"content":[{"type":"resource_link","name":"","uri":"u"},{"type":"resource_link","name":"n","uri":1},{"type":"resource_link","uri":"u"},{"type":"resource_link","name":"N\n","uri":"a b"}]}`,
			want: Result{
				Text: "[resource link unavailable: the MCP block is missing its name or URI]\n[resource link unavailable: the MCP block is missing its name or URI]\n[resource link unavailable: the MCP block is missing its name or URI]\nResource link: N\n (a b)",
				Blocks: []string{
					"[resource link unavailable: the MCP block is missing its name or URI]\n[resource link unavailable: the MCP block is missing its name or URI]\n[resource link unavailable: the MCP block is missing its name or URI]\nResource link: N\n (a b)",
				},
				Value: value(`{"content":[{"type":"resource_link","name":"","uri":"u"},{"type":"resource_link","name":"n","uri":1},{"type":"resource_link","uri":"u"},{"type":"resource_link","name":"N\n","uri":"a b"}]}`),
			},
		},
		{
			name: "image reason option and all four media types",
			raw:  `{"content":[{"type":"image","mimeType":"image/png","data":""},{"type":"image","mimeType":"image/jpeg","data":"AAAA"},{"type":"image","mimeType":"image/webp","data":"AAE="},{"type":"image","mimeType":"image/gif","data":"AA=="}]}`,
			opts: Options{ImageReason: "the current model route could not be resolved"},
			want: Result{
				Text: "[image unavailable: image/png; the current model route could not be resolved; raw image data remains available to programmatic callers]\n" +
					"[image unavailable: image/jpeg; the current model route could not be resolved; raw image data remains available to programmatic callers]\n" +
					"[image unavailable: image/webp; the current model route could not be resolved; raw image data remains available to programmatic callers]\n" +
					"[image unavailable: image/gif; the current model route could not be resolved; raw image data remains available to programmatic callers]",
				Blocks: []string{
					"[image unavailable: image/png; the current model route could not be resolved; raw image data remains available to programmatic callers]",
					"[image unavailable: image/jpeg; the current model route could not be resolved; raw image data remains available to programmatic callers]",
					"[image unavailable: image/webp; the current model route could not be resolved; raw image data remains available to programmatic callers]",
					"[image unavailable: image/gif; the current model route could not be resolved; raw image data remains available to programmatic callers]",
				},
				Value: value(`{"content":[{"type":"image","mimeType":"image/png","data":""},{"type":"image","mimeType":"image/jpeg","data":"AAAA"},{"type":"image","mimeType":"image/webp","data":"AAE="},{"type":"image","mimeType":"image/gif","data":"AA=="}]}`),
			},
		},
		{
			name: "image media type checks are exact; data must be a string",
			raw:  `{"content":[{"type":"image","mimeType":"image/PNG","data":"AQ=="},{"type":"image","mimeType":7,"data":"AQ=="},{"type":"image","mimeType":"image/png","data":1},{"type":"image","mimeType":"image/png","data":"AQ==\n"}]}`,
			want: Result{
				Text: "[image unavailable: image/PNG; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]\n" +
					"[image unavailable: 7; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]\n" +
					pngBadBase64 + "\n" + pngBadBase64,
				Blocks: []string{
					"[image unavailable: image/PNG; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]",
					"[image unavailable: 7; the declared media type is not PNG, JPEG, WebP, or GIF; raw image data remains available to programmatic callers]",
					pngBadBase64, pngBadBase64,
				},
				Value: value(`{"content":[{"type":"image","mimeType":"image/PNG","data":"AQ=="},{"type":"image","mimeType":7,"data":"AQ=="},{"type":"image","mimeType":"image/png","data":1},{"type":"image","mimeType":"image/png","data":"AQ==\n"}]}`),
			},
		},
		{
			name: "escaped base64 is judged after unescaping",
			raw:  `{"content":[{"type":"image","mimeType":"image\/png","data":"AQ\u003d\u003d"}]}`,
			want: Result{Text: pngNoStore, Blocks: []string{pngNoStore}, Value: value(`{"content":[{"type":"image","mimeType":"image\/png","data":"AQ\u003d\u003d"}]}`)},
		},
		{
			name: "canonical bytes survive: key order, big numbers, whitespace",
			raw:  " {\n \"_meta\": {\"x\":1},\n \"content\" : [ {\"type\":\"text\",\"text\":\"a\",\"annotations\":{\"z\":1,\"a\":2}} , 12345678901234567890, 1.50 ],\n \"structuredContent\" : {\"n\": 12345678901234567890, \"b\":1, \"a\":0.10} ,\"isError\":false } \n",
			want: Result{
				Text:              "a\n" + unsupportedBlock + "\n" + unsupportedBlock,
				Blocks:            []string{"a\n" + unsupportedBlock + "\n" + unsupportedBlock},
				Value:             value(`{"content":[ {"type":"text","text":"a","annotations":{"z":1,"a":2}} , 12345678901234567890, 1.50 ],"structuredContent":{"n": 12345678901234567890, "b":1, "a":0.10}}`),
				StructuredContent: value(`{"n": 12345678901234567890, "b":1, "a":0.10}`), HasStructured: true,
			},
		},
		{
			name: "structuredContent null is present",
			raw:  `{"content":[{"type":"text","text":"x"}],"structuredContent":null}`,
			want: Result{
				Text: "x", Blocks: []string{"x"},
				Value:             value(`{"content":[{"type":"text","text":"x"}],"structuredContent":null}`),
				StructuredContent: value(`null`), HasStructured: true,
			},
		},
		{
			name: "isError must be exactly true",
			raw:  `{"content":[{"type":"text","text":"x"}],"isError":"true"}`,
			want: Result{Text: "x", Blocks: []string{"x"}, Value: value(`{"content":[{"type":"text","text":"x"}]}`)},
		},
		{
			name: "content null is the legacy shape",
			raw:  `{"content":null}`,
			want: Result{Text: "(no output)", Blocks: []string{"(no output)"}, Value: value(`{"content":[{"type":"text","text":"(no output)"}]}`)},
		},
		{
			name: "content object with toolResult is the legacy shape",
			raw:  `{"content":{"type":"text","text":"x"},"toolResult":[1, {"b": "<&>"}, "caf\u00e9"]}`,
			want: Result{
				Text: `[1,{"b":"<&>"},"caf\u00e9"]`, Blocks: []string{`[1,{"b":"<&>"},"caf\u00e9"]`},
				Value: value(`{"content":[{"type":"text","text":"[1,{\"b\":\"<&>\"},\"caf\\u00e9\"]"}]}`),
			},
		},
		{
			name: "legacy null toolResult",
			raw:  `{"toolResult":null}`,
			want: Result{Text: "null", Blocks: []string{"null"}, Value: value(`{"content":[{"type":"text","text":"null"}]}`)},
		},
		{
			name: "invalid UTF-8 in text becomes U+FFFD, bytes stay in the value",
			raw:  "{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}",
			want: Result{Text: "a\uFFFDb", Blocks: []string{"a\uFFFDb"}, Value: value("{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}")},
		},
		{
			name: "strings with brackets and escaped quotes do not confuse the walker",
			raw:  `{"content":[{"type":"text","text":"]}\"{[","x":["]",{"}":"\\"}]},{"type":"text","text":"end"}]}`,
			want: Result{Text: "]}\"{[\nend", Blocks: []string{"]}\"{[\nend"}, Value: value(`{"content":[{"type":"text","text":"]}\"{[","x":["]",{"}":"\\"}]},{"type":"text","text":"end"}]}`)},
		},
		{
			name: "empty objects",
			raw:  `{"content":[{},{ }]}`,
			want: Result{
				Text:   "[unsupported MCP content type: undefined]\n[unsupported MCP content type: undefined]",
				Blocks: []string{"[unsupported MCP content type: undefined]\n[unsupported MCP content type: undefined]"},
				Value:  value(`{"content":[{},{ }]}`),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Project(json.RawMessage(tt.raw), tt.opts)
			if err != nil {
				t.Fatalf("Project(%s): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Project(%s) mismatch (-want +got):\n%s", tt.raw, diff)
			}
			if got.Value != nil && !json.Valid(got.Value) {
				t.Errorf("Value %s is not valid JSON", got.Value)
			}
		})
	}
}

func TestProjectErrors(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{``, "projecting tools/call result: result is not valid JSON: unexpected end of JSON input"},
		{`{`, "projecting tools/call result: result is not valid JSON: unexpected end of JSON input"},
		{`{"content":[}`, "projecting tools/call result: result is not valid JSON: invalid character '}' looking for beginning of value"},
		{`{} {}`, "projecting tools/call result: result is not valid JSON: invalid character '{' after top-level value"},
		{`[]`, "projecting tools/call result: result is a JSON array, want an object"},
		{` null`, "projecting tools/call result: result is a JSON null, want an object"},
		{`"x"`, "projecting tools/call result: result is a JSON string, want an object"},
		{`42`, "projecting tools/call result: result is a JSON number, want an object"},
		{`-1`, "projecting tools/call result: result is a JSON number, want an object"},
		{`true`, "projecting tools/call result: result is a JSON boolean, want an object"},
		{`false`, "projecting tools/call result: result is a JSON boolean, want an object"},
	}
	for _, tt := range tests {
		got, err := Project(json.RawMessage(tt.raw), Options{})
		if err == nil {
			t.Errorf("Project(%q) = %+v, want error %q", tt.raw, got, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Project(%q) error = %q, want %q", tt.raw, err, tt.want)
		}
		if _, err := Inspect(json.RawMessage(tt.raw)); err == nil || err.Error() != tt.want {
			t.Errorf("Inspect(%q) error = %v, want %q", tt.raw, err, tt.want)
		}
	}
}

// Inspect reads isError and structuredContent as Project does.
func TestInspectAgreesWithProject(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"t"}]}`,
		`{"content":[],"structuredContent":{"n":1}}`,
		`{"content":[],"structuredContent":null,"isError":true}`,
		`{"isError":"true","toolResult":1}`,
		`{"isError":true,"isError":false,"structuredContent":1,"structuredContent":[2]}`,
	} {
		p, err := Project(json.RawMessage(raw), Options{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := Inspect(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		want := Head{IsError: p.IsError, StructuredContent: p.StructuredContent, HasStructured: p.HasStructured}
		if diff := cmp.Diff(want, h); diff != "" {
			t.Errorf("Inspect(%s) differs from Project (-want +got):\n%s", raw, diff)
		}
	}
}

// TestProjectDoesNotAlias proves the result owns its bytes: a caller may
// reuse its read buffer after Project returns.
func TestProjectDoesNotAlias(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`)
	got, err := Project(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = ' '
	}
	want := Result{
		Text: "x", Blocks: []string{"x"},
		Value:             value(`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`),
		StructuredContent: value(`{"a":1}`), HasStructured: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result changed with its input (-want +got):\n%s", diff)
	}
	// StructuredContent is capped, so appending to it cannot write into Value.
	_ = append(got.StructuredContent, "XXXX"...)
	if string(got.Value) != `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}` {
		t.Errorf("appending to StructuredContent changed Value to %s", got.Value)
	}
}

// refCanonical is docs/upstream.md §4.7's definition taken literally: strict decode,
// then re-encode to the identical string.
func refCanonical(s string) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && base64.StdEncoding.EncodeToString(b) == s
}

func TestCanonicalBase64(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"", true},
		{"AQ==", true},
		{"AB==", false},
		{"AAE=", true},
		{"AAF=", false},
		{"AAAA", true},
		{"AQ=", false},
		{"AQ", false},
		{"A===", false},
		{"====", false},
		{"A=AA", false},
		{"AQ==AQ==", false},
		{"AQ==\n", false},
		{"AQ\n==", false},
		{" AQ=", false},
		{"-_-_", false},
		{"+/+/", true},
		{"not base64", false},
		{tinyPNG, true},
	}
	for _, tt := range tests {
		if got := canonicalBase64(tt.s); got != tt.want {
			t.Errorf("canonicalBase64(%q) = %v, want %v", tt.s, got, tt.want)
		}
		if ref := refCanonical(tt.s); ref != tt.want {
			t.Errorf("reference disagrees with the table on %q: %v", tt.s, ref)
		}
	}
}

func FuzzCanonicalBase64(f *testing.F) {
	for _, s := range []string{"", "AQ==", "AB==", "AAE=", "AAF=", "AAAA", "A===", "AQ==\n", tinyPNG} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := canonicalBase64(s), refCanonical(s); got != want {
			t.Fatalf("canonicalBase64(%q) = %v, reference says %v", s, got, want)
		}
	})
}

// FuzzProject checks that Project never panics, fails exactly when the input
// is not a JSON object, keeps Text the join of Blocks, and produces a valid
// Value whose content and structuredContent are the received bytes
// (compared with encoding/json's own member extraction).
func FuzzProject(f *testing.F) {
	seeds := []string{
		`{"content":[{"type":"text","text":"hello world"}]}`,
		`{"content":[42, null, ["nested"]]}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"image","mimeType":"image/png","data":"not base64"}]}`,
		`{"content":[{"type":"resource_link","name":"Design","uri":"https://example.test/design"},{"type":"audio"},{"type":"resource"},{"type":"video"},{}]}`,
		`{"toolResult":{"key":"value"},"structuredContent":null}`,
		`{"content":[],"structuredContent":["kept",{"nested":true}],"isError":true}`,
		`{"content":[{"type":"text","text":"a","annotations":{"z":1,"a":2}}, 12345678901234567890]}`,
		`{"\u0063ontent":[{"t\u0079pe":"text","text":"\ud800"}]}`,
		`[]`, `null`, ``, `{`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := append([]byte(nil), raw...)
		got, err := Project(raw, Options{RawName: "t"})
		var members map[string]json.RawMessage
		isObject := json.Valid(in) && json.Unmarshal(in, &members) == nil && members != nil
		if (err == nil) != isObject {
			t.Fatalf("Project(%q) error = %v, but the input is an object: %v", in, err, isObject)
		}
		if err != nil {
			return
		}
		if string(raw) != string(in) {
			t.Fatalf("Project modified its input")
		}
		if got.Text != strings.Join(got.Blocks, "\n") || len(got.Blocks) == 0 {
			t.Fatalf("Text %q is not the join of Blocks %q", got.Text, got.Blocks)
		}
		sc, hasSC := members["structuredContent"]
		if got.HasStructured != hasSC || string(got.StructuredContent) != string(sc) {
			t.Fatalf("structuredContent = %v %s, want %v %s", got.HasStructured, got.StructuredContent, hasSC, sc)
		}
		if got.IsError != (string(members["isError"]) == "true") {
			t.Fatalf("IsError = %v, isError member is %s", got.IsError, members["isError"])
		}
		if got.IsError {
			if got.Value != nil {
				t.Fatalf("error result has Value %s", got.Value)
			}
			return
		}
		if !json.Valid(got.Value) {
			t.Fatalf("Value %q is not valid JSON", got.Value)
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(got.Value, &v); err != nil {
			t.Fatalf("Value %q is not an object: %v", got.Value, err)
		}
		if c := members["content"]; len(c) > 0 && c[0] == '[' && string(v["content"]) != string(c) {
			t.Fatalf("Value content = %s, want the received %s", v["content"], c)
		}
		if string(v["structuredContent"]) != string(sc) {
			t.Fatalf("Value structuredContent = %s, want the received %s", v["structuredContent"], sc)
		}
	})
}

func BenchmarkProjectSmallText(b *testing.B) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"Hello, World!"}],"isError":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Project(raw, Options{RawName: "greet"}); err != nil {
			b.Fatal(err)
		}
	}
}

// A result whose entries each project to a diagnostic many times their
// size (a bare 0 to a 52-byte line) gives a view bounded by its own size,
// which says how many entries it leaves out, not one of half a gigabyte.
func TestAmplifyingContentBounded(t *testing.T) {
	for _, entry := range []string{"0", `{"type":"image"}`} {
		raw := []byte(`{"content":[` + entry + strings.Repeat(","+entry, 1<<20-1) + `]}`)
		res, err := Project(raw, Options{RawName: "t"})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(res.Blocks, "\n")
		if bound := 2*len(raw) + 64<<10 + 400; len(text) > bound {
			t.Errorf("the view of a %d-byte result of %s entries is %d bytes, want at most %d", len(raw), entry, len(text), bound)
		}
		if !strings.Contains(text, "more content blocks not shown") {
			t.Errorf("the view of %s entries does not say it left some out: ...%s", entry, text[max(0, len(text)-200):])
		}
	}
}
