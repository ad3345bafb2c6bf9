package toolsearch

import (
	"slices"
	"strings"
)

// The tables below are read-only after package initialization.

// stopWords are dropped from tools and queries alike: English function
// words and the filler of requests ("please", "I want to", "a tool that").
var stopWords = setOf(`
	a about above after again against all also am an and any are as at be
	because been before being below between both but by can could did didn
	do does doesn doing don down go during each eg etc few for from further
	had has have having he her here hers him his how i ie if in into is
	isn it its itself just let lets like ll me might more most must my
	myself need needs no nor not of off on once only or other our ours
	out over own please re same shall she should so some someone something
	such than that the their theirs them then there these they thing this
	those through to too tool tools under until up us use using ve very via
	want wanna was way we were what whatever when where which while who
	whom why will with won would you your yours`)

// phraseTerms join two words that name one thing, or an idiom, into the
// word that names it, so that the aliases below can relate it to its
// one-word names. Stop words may be part of a phrase.
var phraseTerms = map[[2]string]string{
	{"pull", "request"}:   "pr",
	{"pull", "requests"}:  "pr",
	{"merge", "request"}:  "mr",
	{"merge", "requests"}: "mr",
	{"screen", "shot"}:    "screenshot",
	{"screen", "shots"}:   "screenshot",
	{"look", "up"}:        "lookup",
	{"go", "to"}:          "goto",
	{"log", "in"}:         "login",
	{"logged", "in"}:      "login",
	{"sign", "in"}:        "login",
	{"signed", "in"}:      "login",
	{"web", "page"}:       "webpage",
	{"web", "site"}:       "website",
	{"how", "many"}:       "count",
	{"mouse", "over"}:     "hover",
	{"file", "a"}:         "create", // file a bug
	{"file", "an"}:        "create",
}

// phraseStarts are the first words of phraseTerms.
var phraseStarts = func() map[string]struct{} {
	m := make(map[string]struct{}, len(phraseTerms))
	for pair := range phraseTerms {
		m[pair[0]] = struct{}{}
	}
	return m
}()

// wordTerms are words whose Snowball stem would not meet their siblings'.
var wordTerms = map[string]string{
	"prs": "pr",
	"mrs": "mr",
}

// aliasGroups are words that tools and their users use for one another.
// Each word of a group expands a query to the others, with less weight
// than the word itself. A word marked "~" only expands to its group: the
// group's words do not expand to it ("open" an issue is to create it,
// but to create something is not to open it). A word may be in several
// groups. Keep them to the vocabulary of tools and of requests for them:
// every alias is a chance of a wrong match.
var aliasGroups = [][]string{
	{"get", "fetch", "read", "retrieve", "load", "download", "~open", "~show", "~view", "~display"},
	{"list", "show", "enumerate", "display", "view"},
	{"create", "make", "add", "new", "insert", "generate", "~open", "~schedule", "~book"},
	{"delete", "remove", "destroy", "erase", "drop", "rm", "del", "~forget", "~purge", "~discard", "~wipe", "~cancel"},
	{"search", "find", "query", "lookup", "look", "locate", "grep"},
	{"update", "edit", "modify", "change", "patch", "alter", "set"},
	{"run", "execute", "exec", "invoke", "launch", "trigger", "evaluate", "eval"},
	{"file", "document", "doc"},
	{"issue", "ticket", "bug"},
	{"pr", "mr"},
	{"repo", "repository", "project"},
	{"message", "chat", "post", "msg", "dm"},
	{"send", "post"},
	{"web", "browser", "page", "url", "site", "website", "webpage", "link"},
	{"navigate", "goto", "visit", "browse", "~open", "~load"},
	{"screenshot", "~capture", "~grab"}, // a snapshot is often a text one (an accessibility tree)
	{"directory", "folder", "dir"},
	{"write", "save", "store"},
	{"move", "rename", "mv"},
	{"click", "press", "tap", "~hit"},
	{"key", "keyboard", "keystroke", "~ctrl", "~shortcut", "~hotkey", "~enter", "~escape", "~esc", "~backspace"},
	{"type", "fill", "enter", "input"},
	{"user", "person", "member", "account", "people"},
	{"login", "authenticate", "auth", "signin"},
	{"comment", "reply", "respond"},
	{"channel", "room"},
	{"email", "mail"},
	{"image", "picture", "photo"},
	{"database", "db"},
	{"info", "information", "detail", "metadata", "stat"},
	{"size", "big", "large"},
	{"tree", "hierarchy", "structure"},
	{"tag", "label"},
	{"error", "exception", "crash", "failure"},
	{"recent", "latest", "last", "newest"},
	{"current", "now"},
	{"sum", "add", "plus"},
	{"echo", "repeat"},
	{"memory", "remember", "memorize"},
	{"elevation", "altitude"},
	{"weather", "forecast", "temperature", "~rain", "~snow", "~storm", "~sunny", "~umbrella", "~wind"},
	{"task", "todo", "~remind", "~reminder"},
	{"time", "date", "clock"},
	{"select", "choose", "pick"},
	{"dropdown", "combobox"},
	{"stop", "kill", "terminate", "halt", "abort", "cancel"},
	{"restart", "reboot"},
	{"copy", "duplicate", "clone"},
	{"fork", "~clone"},
	{"upload", "~attach"},
	{"wait", "sleep", "pause"},
	{"scrape", "extract"},
	{"rerun", "retry"},
	{"review", "~approve"},
	{"reaction", "react", "emoji"},
	{"thread", "conversation"},
	{"place", "location", "venue"},
	{"coordinate", "latitude", "longitude", "lat", "lng", "gps"},
	{"direction", "route"},
	{"distance", "~far"},
	{"javascript", "js"},
	{"kubernetes", "k8s", "kube"},
	{"postgres", "postgresql", "psql", "pg"},
	{"event", "~meeting", "~appointment"},
	{"payment", "charge", "pay"},
	{"invoice", "bill"},
	{"alert", "warning", "warn"},
}

// aliases maps a term to the other terms of its groups.
var aliases = buildAliases(aliasGroups)

func buildAliases(groups [][]string) map[string][]string {
	var a analyzer
	out := make(map[string][]string)
	for _, g := range groups {
		var terms, oneWay []string
		for _, w := range g {
			w, only := strings.CutPrefix(w, "~")
			if t := a.term(w); t != "" && only {
				oneWay = append(oneWay, t)
			} else if t != "" {
				terms = append(terms, t)
			}
		}
		for _, t := range append(terms, oneWay...) {
			for _, o := range terms {
				if o != t && !slices.Contains(out[t], o) {
					out[t] = append(out[t], o)
				}
			}
		}
	}
	return out
}

func setOf(words string) map[string]struct{} {
	fields := strings.Fields(words)
	m := make(map[string]struct{}, len(fields))
	for _, w := range fields {
		m[w] = struct{}{}
	}
	return m
}
