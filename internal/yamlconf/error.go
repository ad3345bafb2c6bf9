package yamlconf

import "github.com/mcpbridge/mcpbridge/confpos"

// Error is one problem in a YAML document, with the position of the node it
// concerns. It is the public [confpos.Error], so that plugin kinds outside
// this module report problems the host places the same way.
type Error = confpos.Error

// Errors is every problem found in one document, in document order: the
// public [confpos.Errors].
type Errors = confpos.Errors

// AsErrors returns the positioned problems inside err: the Errors or *Error it
// wraps, or nil when err carries no position information.
func AsErrors(err error) Errors { return confpos.AsErrors(err) }
