package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// systemReadPaths are readable by every sandboxed server: the system's
// programs and libraries, its configuration (/etc holds no user secrets;
// what is secret there is readable by root only), the randomness devices,
// and the few /proc files language runtimes read at start. /proc/self is
// resolved by the re-executed process, whose PID the server keeps. The
// home directory is not among them.
func systemReadPaths() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
		"/dev/urandom", "/dev/random",
		"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg",
		"/proc/version", "/proc/filesystems", "/proc/sys/kernel", "/proc/sys/vm/overcommit_memory",
		"/sys/devices/system/cpu", "/sys/fs/cgroup",
	}
}

// writableDevices are the devices a server may write to, having no effect
// outside it.
func writableDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full"}
}

// runtimeDirs returns the directories the server's own executable needs:
// the directory of path and of the file it links to, the installation
// prefix above a bin directory (/opt/node/bin/node: /opt/node, where npm's
// modules are), and the outermost node_modules that holds an npm bin. None
// is "/", home or an ancestor of home, and inside home no prefix is added
// (~/.local/bin would open ~/.local/share): name those in read.
func runtimeDirs(path, home string) []string {
	var out []string
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	for _, p := range []string{path, resolved} {
		dir := filepath.Dir(p)
		out = appendSafe(out, dir, home)
		if filepath.Base(dir) == "bin" && !inHome(dir, home) {
			out = appendSafe(out, filepath.Dir(dir), home)
		}
		if i := strings.Index(p, "/node_modules/"); i >= 0 {
			out = appendSafe(out, p[:i+len("/node_modules")], home)
		}
	}
	return out
}

// appendSafe appends dir unless it would open too much: the root, home or
// an ancestor of home.
func appendSafe(list []string, dir, home string) []string {
	if dir == "/" || dir == "." || aboveHome(dir, home) {
		return list
	}
	return appendNew(list, dir)
}

// homes is home and, when it goes through a symlink (/home → /var/home),
// where it leads: a path resolved through the link is home's all the same.
func homes(home string) []string {
	if home == "" {
		return nil
	}
	out := []string{home}
	if real, err := filepath.EvalSymlinks(home); err == nil && real != home {
		out = append(out, real)
	}
	return out
}

// inHome reports whether path is home or lies below it, by either of
// its names.
func inHome(path, home string) bool {
	return slices.ContainsFunc(homes(home), func(h string) bool { return within(path, h) })
}

// aboveHome reports whether dir is home or one of its ancestors, by
// either of its names.
func aboveHome(dir, home string) bool {
	return slices.ContainsFunc(homes(home), func(h string) bool { return within(h, dir) })
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// cacheDirs returns the package caches that npx and uvx (by the base name
// of the command) need to write, where their environment puts them.
func cacheDirs(command string, env []string, home string) []string {
	get := func(key string) string { v, _ := lookupEnv(env, key); return v }
	under := func(base, fallback, sub string) string {
		if base != "" {
			return filepath.Join(base, sub)
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, fallback, sub)
	}
	var dirs []string
	switch filepath.Base(command) {
	case "npx", "npm":
		dirs = []string{firstSet(get("npm_config_cache"), get("NPM_CONFIG_CACHE"), under("", ".npm", ""))}
	case "uvx", "uv":
		dirs = []string{
			firstSet(get("UV_CACHE_DIR"), under(get("XDG_CACHE_HOME"), ".cache", "uv")),
			firstSet(get("UV_PYTHON_INSTALL_DIR"), under(get("XDG_DATA_HOME"), ".local/share", "uv")),
		}
	}
	var out []string
	for _, d := range dirs {
		if d != "" && filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
