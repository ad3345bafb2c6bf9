// Package buildinfo says which mcpbridge this is: the version every
// component reports to its peers (the MCP client's and the gateway's
// implementation info).
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is mcpbridge's version as it reports itself in MCP handshakes.
const Version = "0.1.0"

// Describe says which build this is: Version, then the module version and
// the VCS commit the binary was built from, as the Go toolchain recorded
// them (a go install'ed binary has its module version; one built in a
// checkout, its commit and whether the tree was modified).
func Describe() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Version // untested: test binaries carry build info
	}
	return describe(bi)
}

func describe(bi *debug.BuildInfo) string {
	parts := []string{"module " + bi.Main.Version}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		commit := "commit " + rev[:min(12, len(rev))]
		if t := settings["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			commit += ", modified"
		}
		parts = append(parts, commit)
	}
	parts = append(parts, bi.GoVersion)
	return Version + " (" + strings.Join(parts, ", ") + ")"
}
