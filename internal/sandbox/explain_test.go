package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What runtimes print when Landlock refuses them, and whether (and how)
// Explain blames the sandbox.
func TestExplain(t *testing.T) {
	const home = "/home/ann"
	p := Plan{
		ReadDirs:   []string{"/usr", home + "/bin", "/srv/notes"},
		ReadFiles:  []string{"/etc/hosts"},
		WriteDirs:  []string{"/srv/out"},
		WriteFiles: []string{"/dev/null"},
	}
	// The user may use everything but /root.
	may := func(path string, _ bool) bool { return !strings.HasPrefix(path, "/root") }
	tests := []struct {
		name, text string
		want       *Denial
	}{
		{"Node's EACCES", "Error: EACCES: permission denied, open '/home/ann/.ssh/id_rsa'",
			&Denial{Path: home + "/.ssh/id_rsa", Key: "read", Add: home + "/.ssh/id_rsa"}},
		{"Python's PermissionError, in a runtime manager", "PermissionError: [Errno 13] Permission denied: '/home/ann/.pyenv/versions/3.13.0/lib/python3.13'",
			&Denial{Path: home + "/.pyenv/versions/3.13.0/lib/python3.13", Key: "read", Add: home + "/.pyenv"}},
		{"bash's exec of a shim's target, after the readable shim", "/home/ann/bin/python3: line 5: /home/ann/.pyenv/libexec/pyenv: Permission denied",
			&Denial{Path: home + "/.pyenv/libexec/pyenv", Key: "read", Add: home + "/.pyenv"}},
		{"a quoted path with spaces", `EACCES: permission denied, scandir "/home/ann/My Notes"`,
			&Denial{Path: home + "/My Notes", Key: "read", Add: home + "/My Notes"}},
		{"Go's write to a readable directory", "open /srv/notes/new.txt: permission denied",
			&Denial{Path: "/srv/notes/new.txt", Key: "write", Add: "/srv/notes"}},
		{"a readable file, written", "EACCES: permission denied, open '/etc/hosts'",
			&Denial{Path: "/etc/hosts", Key: "write", Add: "/etc/hosts"}},
		{"not a permission error", "ENOENT: no such file or directory, open '/home/ann/x'", nil},
		{"a path the user may not use either", "open /root/secret: permission denied", nil},
		{"a writable path: not the sandbox", "EACCES: permission denied, open '/srv/out/x'", nil},
		{"no path", "Error: EACCES: permission denied", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := p.explain(tt.text, home, may)
			var got *Denial
			if ok {
				got = &d
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("explain(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestDenialString(t *testing.T) {
	for _, tt := range []struct {
		d    Denial
		want string
	}{
		{Denial{Path: "/home/ann/.pyenv/libexec/pyenv", Key: "read", Add: "/home/ann/.pyenv"},
			`the sandbox denied "/home/ann/.pyenv/libexec/pyenv" (outside sandbox.read and sandbox.write): to allow it, add "/home/ann/.pyenv" to sandbox.read, or to sandbox.write if the server is to change it`},
		{Denial{Path: "/srv/notes/new.txt", Key: "write", Add: "/srv/notes"},
			`the sandbox denied "/srv/notes/new.txt" (readable, outside sandbox.write): to allow it, add "/srv/notes" to sandbox.write`},
	} {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %s\nwant       %s", got, tt.want)
		}
	}
}
