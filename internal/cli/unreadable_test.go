package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A config file that exists but cannot be read is not called invalid: the
// message says which file, why it cannot be read and what to check.
func TestUnreadableConfigSaysWhy(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "notadir")
	writeFileAt(t, notDir, "[]\n")
	cases := []struct{ name, path, want string }{
		{"a file where a directory belongs", filepath.Join(notDir, "mcpbridge.yaml"),
			"mcpbridge: config file " + notDir + "/mcpbridge.yaml cannot be read: " + notDir + " is a file, not a directory: correct the path\n"},
		{"a directory", dir,
			"mcpbridge: config file " + dir + " is a directory: name the config file in it (such as " + dir + "/mcpbridge.yaml)\n"},
	}
	if os.Geteuid() != 0 { // root reads any file whatever its mode
		private := filepath.Join(dir, "private.yaml")
		writeFileAt(t, private, "[]\n")
		if err := os.Chmod(private, 0o000); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, path, want string }{"a file of mode 000", private,
			"mcpbridge: config file " + private + " cannot be read: permission denied: check its owner and mode (ls -l " + private + "): the user mcpbridge runs as must be able to read it\n"})
	}
	t.Run("a file of mode 600 owned by another user", func(t *testing.T) {
		testOwnedByAnother(t)
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"validate", "tools"} {
				r := mcpbridge(t, "", cmd, "--config", c.path)
				if r.code != ExitUsage || r.stderr != c.want {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and:\n%s", cmd, r.code, r.stderr, c.want)
				}
			}
		})
	}
}

// testOwnedByAnother runs mcpbridge, as the user nobody, on a config file
// of mode 600 that root owns: as root only, which alone can run a process
// as another user.
func testOwnedByAnother(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can run mcpbridge as another user")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // nobody reaches the file and the binary
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	private := filepath.Join(dir, "private.yaml")
	if err := os.WriteFile(private, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcpbridge")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", private)
	cmd.Env = []string{mainEnv + "=1", "HOME=" + dir, "XDG_CONFIG_HOME=/dev/null/mcpbridge-tests", "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := "mcpbridge: config file " + private + " cannot be read: permission denied: check its owner and mode (ls -l " + private + "): the user mcpbridge runs as must be able to read it\n"
	// A prefix: a binary built for coverage adds a line of its own after it.
	if code := cmd.ProcessState.ExitCode(); code != ExitUsage || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("validate as nobody: %v, exit %d, stderr:\n%s\nwant exit 2 and:\n%s", err, code, stderr.String(), want)
	}
}

// A config file that is a symbolic link to a file gone is said to be one,
// with the target named, not to be missing itself.
func TestDanglingConfigLinkNamesTarget(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Symlink("gone.yaml", "dangling.yaml"); err != nil {
		t.Fatal(err)
	}
	want := "config file dangling.yaml is a symbolic link to gone.yaml, which does not exist: restore gone.yaml, or point the link at the config file (ln -sfn FILE dangling.yaml)"
	for _, cmd := range []string{"validate", "tools"} {
		r := mcpbridge(t, "", cmd, "--config", "dangling.yaml")
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and:\n%s", cmd, r.code, r.stderr, want)
		}
	}
}

// A --url server's lock under a state directory that cannot be used (a
// file where a directory belongs) says so, not that the lock cannot be
// trusted: there is no lock to undo an edit of or to delete.
func TestURLLockUnderUnusableStateDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state")
	writeFileAt(t, file, "")
	t.Setenv("XDG_STATE_HOME", file)
	want := "the state directory " + file + "/mcpbridge cannot be used"
	for _, args := range [][]string{{"tools"}, {"pin"}} {
		r := mcpbridge(t, "", append(args, "--url", "http://127.0.0.1:1/mcp")...)
		if r.code != ExitFailed || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "not a directory") ||
			!strings.Contains(r.stderr, "set XDG_STATE_HOME to one") || strings.Contains(r.stderr, "trusted") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1, %q and why, not that the lock cannot be trusted", args, r.code, r.stderr, want)
		}
	}
}
