// Package host runs plugin instances described by a YAML composition file:
// one instance per entry, hot-reloaded entry by entry and shut down cleanly.
//
// The file is a YAML list of entries {id, name, config, disabled}. Entries are
// diffed by id across reloads, so id is required and unique. ParseEntries
// reads the list strictly; the plugin selected by name decodes config itself,
// and FormatErrors and EntryError put the file, line and entry in front of its
// problems, so every config error reads
// "<file>:<line>:<col>: entry "<id>": <path>: <message>".
package host
