// Package host runs plugin instances described by a YAML composition file:
// one instance per entry, started in parallel, hot-reloaded entry by entry
// and shut down cleanly.
//
// The file is a YAML list of entries {id, name, config, disabled}. Entries are
// diffed by id across reloads, so id is required and unique. ParseEntries
// reads the list strictly; the plugin selected by name decodes config itself,
// and FormatErrors and EntryError put the file, line and entry in front of its
// problems, so every config error reads
// "<file>:<line>:<col>: entry "<id>": <path>: <message>".
//
// The plugin contract is Kind (decode an entry's config without side
// effects; start an instance given the registry, a logger tagged with the
// entry and a lifetime) and Instance (readiness, a status snapshot, Close).
// A Catalog holds the kinds a program runs; it is built in main, never a
// global. Catalog.Parse validates a whole file into a Plan without starting
// anything (the validate command).
//
// A Host runs a Plan (Apply): instances start in parallel, and readiness is
// every first attempt settled or its startup timeout passed. A new Plan is
// reconciled by id and config fingerprint: unchanged entries are left
// alone, removed and changed ones are disposed of first, then new ones
// start, and a changed entry that fails to start gets its previous config
// back. WatchFile applies the file whenever it changes; Status is the
// snapshot a health check or the status command shows; Close disposes of
// everything in parallel, bounded.
package host
