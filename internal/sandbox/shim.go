package sandbox

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// managerDirs returns the directories, directly in the home directory, of the
// runtime managers whose shims stand in for an interpreter: pyenv's
// shims/python3 execs its libexec/pyenv, which finds the version under
// versions/ and execs it; asdf, rbenv, nodenv and the rest work alike, and
// nvm and volta keep their runtimes below theirs. The whole directory is
// what the interpreter needs, and it holds nothing of the user's but
// runtimes.
func managerDirs() []string {
	return []string{".asdf", ".goenv", ".jenv", ".nodenv", ".nvm", ".plenv", ".pyenv", ".rbenv", ".volta"}
}

// managerEnv returns the variables that move those directories elsewhere.
func managerEnv() []string {
	return []string{"ASDF_DATA_DIR", "ASDF_DIR", "GOENV_ROOT", "JENV_ROOT", "NODENV_ROOT", "NVM_DIR", "PLENV_ROOT", "PYENV_ROOT", "RBENV_ROOT", "VOLTA_HOME"}
}

// managerRoots returns the runtime managers' directories the command at
// path needs to read: the one that holds path (or the file it links to),
// or the one a shell script at path execs into (a shim elsewhere, such as
// ~/bin/python execing ~/.pyenv/libexec/pyenv). Other files of the home
// directory are never added: a denied one is reported (Plan.Explain).
func managerRoots(path string, env []string, home string) []string {
	candidates := []string{path}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		candidates = append(candidates, resolved)
	}
	candidates = append(candidates, shellExecTargets(readHead(path))...)
	var roots []string
	for _, c := range candidates {
		if root := managerRoot(c, env, home); root != "" {
			roots = appendSafe(roots, root, home)
		}
	}
	return roots
}

// managerRoot returns the runtime manager's directory that holds path, or
// "".
func managerRoot(path string, env []string, home string) string {
	for _, key := range managerEnv() {
		if dir, _ := lookupEnv(env, key); filepath.IsAbs(dir) && within(path, filepath.Clean(dir)) {
			return filepath.Clean(dir)
		}
	}
	if home == "" || !within(path, home) {
		return ""
	}
	rel, _ := filepath.Rel(home, path)
	top, _, _ := strings.Cut(rel, string(filepath.Separator))
	if !slices.Contains(managerDirs(), top) {
		return ""
	}
	return filepath.Join(home, top)
}

// shimHeadBytes is how much of a script is read for its exec lines: shims
// are a few hundred bytes.
const shimHeadBytes = 8 << 10

// readHead returns the first shimHeadBytes of the file at path, or nil.
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, shimHeadBytes))
	return b
}

// shellExec matches a shell's exec of an absolute path, quoted or not, at
// the start of a line: exec "/root/.pyenv/libexec/pyenv" exec "$program".
var shellExec = regexp.MustCompile(`(?m)^[ \t]*exec[ \t]+(?:"(/[^"$]+)"|'(/[^']+)'|(/[^\s;&|$"']+))`)

// shellExecTargets returns the absolute paths a shell script execs, in
// order; nil when script is not a shell script (its #! line names sh,
// bash, dash or zsh, directly or through env).
func shellExecTargets(script []byte) []string {
	first, _, _ := bytes.Cut(script, []byte{'\n'})
	if !bytes.HasPrefix(first, []byte("#!")) || !isShell(string(first[2:])) {
		return nil
	}
	var out []string
	for _, m := range shellExec.FindAllSubmatch(script, -1) {
		out = append(out, string(bytes.Join(m[1:], nil)))
	}
	return out
}

// isShell reports whether an interpreter line (after #!) runs a shell.
func isShell(line string) bool {
	fields := strings.Fields(line)
	if len(fields) > 1 && filepath.Base(fields[0]) == "env" {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return false
	}
	switch filepath.Base(fields[0]) {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}
