// Package yamlconf decodes configuration from gopkg.in/yaml.v3 nodes strictly
// and with positions, so that every bad input becomes an error naming its
// line, column and path (config.reconnect.maxAttempts), and every problem in a
// file is reported at once rather than one per edit-run cycle.
//
// A [Decoder] collects [Error] values while the caller walks the document
// with [Map] getters; [Decoder.Err] returns them all as [Errors]. String
// getters named Expand… substitute ${VAR} and ${VAR:-default} (see [Expand]);
// expanded values never appear in error messages, because they are often
// secrets.
package yamlconf
