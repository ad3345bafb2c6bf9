// Package projection turns the raw JSON of an MCP tools/call result into what
// the bridge hands on: the text the model sees and the canonical value
// programmatic callers get (docs/upstream.md §4.4–§4.7, docs/decisions.md §6).
//
// It works on the raw bytes of the result, never on SDK types, because the
// SDK rejects a whole result for one content block of an unknown type, and
// because the canonical value must keep the blocks byte for byte (key order,
// number precision, unknown fields).
package projection
