package sandbox

import (
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

// prepare is Prepare on a kernel whose Landlock ABI is abi (0: none).
func prepare(spec Spec, st Start, abi int) (Plan, error) {
	if abi == 0 && !spec.BestEffort {
		return Plan{}, ErrNoLandlock
	}
	p := Plan{
		Network: spec.Network, BestEffort: spec.BestEffort, ABI: abi,
		MemoryMiB: spec.MemoryMiB, Processes: spec.Processes, OpenFiles: spec.OpenFiles,
	}
	var missing []string // one line of status each: joined with "; "
	add := func(key string, paths []string, dirs, files *[]string, must bool) {
		for i, path := range paths {
			if err := classify(absFrom(st.Dir, path), dirs, files); err != nil && must {
				missing = append(missing, fmt.Sprintf("sandbox.%s[%d] %q: %v", key, i, path, errors.Unwrap(err)))
			}
		}
	}
	add("read", spec.Read, &p.ReadDirs, &p.ReadFiles, true)
	add("write", spec.Write, &p.WriteDirs, &p.WriteFiles, true)
	if len(missing) > 0 {
		return Plan{}, errors.New(strings.Join(missing, "; "))
	}
	home, _ := lookupEnv(st.Env, "HOME")
	add("system", systemReadPaths(), &p.ReadDirs, &p.ReadFiles, false)
	add("runtime", runtimeDirs(absFrom(st.Dir, st.Path), home), &p.ReadDirs, &p.ReadFiles, false)
	caches := cacheDirs(st.Command, st.Env, home)
	for _, dir := range caches {
		_ = os.MkdirAll(dir, 0o700) // the tool would create it; Landlock needs it to exist
	}
	add("cache", caches, &p.WriteDirs, &p.WriteFiles, false)
	add("device", writableDevices(), &p.WriteDirs, &p.WriteFiles, false)
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
