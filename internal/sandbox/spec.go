package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Spec is the sandbox block of a stdio entry. Its zero value confines the
// server to the system's files and its own runtime, with no network.
type Spec struct {
	// Read (read) lists files and directories the server may also read.
	Read []string
	// Write (write) lists the only files and directories the server may
	// write (and read); the package caches of npx and uvx are added.
	Write []string
	// Network (network) lets the server connect and listen; false gives it
	// a network namespace with only a loopback interface that is down, and
	// no UNIX sockets (seccomp).
	Network bool
	// BestEffort (bestEffort) starts the server unconfined by Landlock on a
	// kernel without it, instead of failing the entry.
	BestEffort bool
	// MemoryMiB (memoryMiB) bounds the server's data segment
	// (RLIMIT_DATA); 0 means no bound.
	MemoryMiB int64
	// Processes (processes) bounds RLIMIT_NPROC; 0 means no bound.
	Processes int64
	// OpenFiles (openFiles) bounds RLIMIT_NOFILE; 0 means no bound.
	OpenFiles int64
}

// Plan is a Spec resolved for one start: absolute paths, sorted into files
// and directories, with the defaults added. It travels to the re-executed
// process as JSON on its command line.
type Plan struct {
	ReadDirs   []string `json:"readDirs,omitempty"`
	ReadFiles  []string `json:"readFiles,omitempty"`
	WriteDirs  []string `json:"writeDirs,omitempty"`
	WriteFiles []string `json:"writeFiles,omitempty"`
	Network    bool     `json:"network,omitempty"`
	BestEffort bool     `json:"bestEffort,omitempty"`
	MemoryMiB  int64    `json:"memoryMiB,omitempty"`
	Processes  int64    `json:"processes,omitempty"`
	OpenFiles  int64    `json:"openFiles,omitempty"`
	// ABI is the Landlock ABI of the kernel (0: none), as found by Prepare.
	ABI int `json:"abi"`
}

// Start describes the server being started: Path is its resolved
// executable, Command the command as configured, Dir its working directory
// ("" for ours) and Env its complete environment.
type Start struct {
	Path, Command, Dir string
	Env                []string
}

// ErrNoLandlock is returned by Prepare when the kernel has no Landlock and
// the spec does not allow a best effort.
var ErrNoLandlock = errors.New("this kernel has no Landlock (set sandbox.bestEffort: true to start the server unconfined)")

// Prepare checks spec against the filesystem and the kernel and resolves it
// for st. Relative paths are taken from st.Dir. A path that does not exist
// is an error naming it as configured, such as
//
//	sandbox.read[1] "/no/such": no such file or directory
func Prepare(spec Spec, st Start) (Plan, error) {
	return prepare(spec, st, ABI())
}

// PathError is a path of a sandbox block that cannot be used: it does not
// exist, or it cannot be reached.
type PathError struct {
	// List is the key of the list ("read" or "write"), Index the path's
	// place in it and Path the path as the Spec holds it.
	List  string
	Index int
	Path  string
	// Err is why, as the kernel said it (fs.ErrNotExist for a missing
	// path).
	Err error
}

// Key names the path in the block, as in sandbox.read[1].
func (e *PathError) Key() string { return fmt.Sprintf("sandbox.%s[%d]", e.List, e.Index) }

func (e *PathError) Error() string { return fmt.Sprintf("%s %q: %v", e.Key(), e.Path, e.Err) }

func (e *PathError) Unwrap() error { return e.Err }

// CheckPaths returns a PathError for each path of spec's read and write
// lists that does not exist, relative paths taken from dir: Prepare
// refuses such a spec (Landlock can only allow what exists), and validate
// reports them before anything starts.
func CheckPaths(spec Spec, dir string) []*PathError {
	var out []*PathError
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", spec.Read}, {"write", spec.Write}} {
		for i, path := range list.paths {
			if _, err := os.Stat(absFrom(dir, path)); err != nil {
				out = append(out, &PathError{List: list.key, Index: i, Path: path, Err: cmp.Or(errors.Unwrap(err), err)})
			}
		}
	}
	return out
}

// prepare is Prepare on a kernel whose Landlock ABI is abi (0: none).
func prepare(spec Spec, st Start, abi int) (Plan, error) {
	if abi == 0 && !spec.BestEffort {
		return Plan{}, ErrNoLandlock
	}
	if bad := CheckPaths(spec, st.Dir); len(bad) > 0 {
		errs := make([]string, len(bad)) // one line of status: joined with "; "
		for i, e := range bad {
			errs[i] = e.Error()
		}
		return Plan{}, errors.New(strings.Join(errs, "; "))
	}
	p := Plan{
		Network: spec.Network, BestEffort: spec.BestEffort, ABI: abi,
		MemoryMiB: spec.MemoryMiB, Processes: spec.Processes, OpenFiles: spec.OpenFiles,
	}
	add := func(paths []string, dirs, files *[]string) {
		for _, path := range paths {
			_ = classify(absFrom(st.Dir, path), dirs, files) // a default that does not exist is left out
		}
	}
	add(spec.Read, &p.ReadDirs, &p.ReadFiles)
	add(spec.Write, &p.WriteDirs, &p.WriteFiles)
	home, _ := lookupEnv(st.Env, "HOME")
	add(systemReadPaths(), &p.ReadDirs, &p.ReadFiles)
	path := absFrom(st.Dir, st.Path)
	add(runtimeDirs(path, home), &p.ReadDirs, &p.ReadFiles)
	add(managerRoots(path, st.Env, home), &p.ReadDirs, &p.ReadFiles)
	caches := cacheDirs(st.Command, st.Env, home)
	for _, dir := range caches {
		_ = os.MkdirAll(dir, 0o700) // the tool would create it; Landlock needs it to exist
	}
	add(caches, &p.WriteDirs, &p.WriteFiles)
	add(writableDevices(), &p.WriteDirs, &p.WriteFiles)
	return p, nil
}

// classify appends path to dirs or files, by what it is.
func classify(path string, dirs, files *[]string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() {
		*dirs = appendNew(*dirs, path)
	} else {
		*files = appendNew(*files, path)
	}
	return nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// absFrom returns path made absolute against dir (or our working
// directory), cleaned.
func absFrom(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	if dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(filepath.Join(dir, path))
	if err != nil {
		return filepath.Clean(path) // untested: only without a working directory
	}
	return abs
}

// lookupEnv finds key in an environment list; the last entry wins, as in
// the kernel's getenv.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
