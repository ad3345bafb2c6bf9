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
// effects; start an instance given a tool.Source to publish its tools
// through, the registry for reading, a logger tagged with the entry and a
// lifetime) and Instance (readiness, a status snapshot, Close), plus the
// optional Drainer (wait for calls in flight before Close). A Catalog
// holds the kinds a program runs; it is built in main, never a global.
// Catalog.Parse validates a whole file into a Plan without starting
// anything (the validate command).
//
// A Host runs a Plan (Apply): instances start in parallel, and readiness is
// every first attempt settled or its startup timeout passed. A new Plan is
// reconciled by id and config fingerprint, making before breaking:
// unchanged entries are left alone; removed and newly disabled ones, and
// those whose instance failed for good, are stopped (the latter then start
// again); a changed entry's new instance starts while the old one keeps
// serving. The new instance publishes through the old one's
// tool.Source.Successor, so its first tools replace the old ones in one
// atomic swap; once it is ready its claims move to it and the old instance
// is drained and stopped. A new config that does not start is stopped and
// the old instance, untouched, keeps running (a *StartError whose Kept
// names it). An added entry that takes a removed entry's claims (an id
// renamed, its serverName kept) succeeds it the same way; a new instance
// that needs a claim another entry gives up in the same reload waits until
// that entry's successor has taken over; entries that would swap claims
// (two serverNames exchanged) in one reload are refused and keep their
// previous configs: do it in two reloads. WatchFile applies the file
// whenever it changes; Status is the snapshot a health check or the status
// command shows; Close disposes of everything in parallel, bounded.
package host
