//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the kernel's Landlock ABI version, 0 when it has none (or it
// is disabled).
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// confineAndExec applies p to this process and execs path; it returns only
// on failure.
func confineAndExec(p Plan, path string, argv []string) error {
	if err := setLimits(p); err != nil {
		return err
	}
	if err := restrict(p); err != nil {
		return err
	}
	if err := installFilter(p.Network); err != nil {
		return err
	}
	if err := closeInherited(); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	err := syscall.Exec(path, argv, os.Environ())
	return fmt.Errorf("exec %q: %w", argv[0], err)
}

// restrict applies the Landlock rules of p to every thread: the server is
// exec'd from one of them and its descendants inherit the domain.
func restrict(p Plan) error {
	if ABI() == 0 {
		if p.BestEffort {
			return nil
		}
		return ErrNoLandlock // the kernel changed since Prepare; untested
	}
	// The newest rules this library knows, narrowed to the kernel's ABI:
	// bestEffort only decides what happens without Landlock at all.
	cfg := landlock.V11.BestEffort()
	if p.Network {
		cfg.HandledAccessNet = 0
		cfg.Scoped &^= landlock.ScopedSet(llsys.ScopeAbstractUnixSocket)
	}
	if err := cfg.Restrict(rules(p, ABI())...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// rules are the Landlock rules of p on a kernel of Landlock ABI abi.
// Renaming and linking across the write directories (refer) comes with
// ABI 2: asked for on ABI 1, go-landlock's best effort drops every rule
// and restricts nothing, so it is asked for only where the kernel has it
// (on ABI 1 such moves are denied, which is the safe side).
func rules(p Plan, abi int) []landlock.Rule {
	write := landlock.RWDirs(p.WriteDirs...)
	if abi >= 2 {
		write = write.WithRefer()
	}
	return []landlock.Rule{
		landlock.RODirs(p.ReadDirs...),
		landlock.ROFiles(p.ReadFiles...),
		write,
		landlock.RWFiles(p.WriteFiles...),
	}
}

// closeInherited marks every descriptor past stderr close-on-exec: the
// server gets its stdin, stdout and stderr only. One mcpbridge inherited
// without the flag (a socket of systemd's, a harness's pipe, a shell's
// 3<file) would pass to the server otherwise, and reading or writing
// through a descriptor is not a path Landlock checks. The runtime's own
// descriptors keep working until the exec.
func closeInherited() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Before Linux 5.11: one by one.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("closing the descriptors the server must not inherit: %w (and %w)", err, rerr)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
				return fmt.Errorf("closing descriptor %d, which the server must not inherit: %w", fd, err)
			}
		}
	}
	return nil
}

// dropCapabilities empties the capability bounding, ambient and
// inheritable sets, so that the server, exec'd next, holds no capability even when
// mcpbridge runs as root: without a user namespace (network: true) it
// would keep every one root has (loading a kernel module, reading past
// file modes, raising its limits), none of which Landlock or the filter
// covers.
func dropCapabilities() error {
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			if errors.Is(err, unix.EPERM) {
				break // no CAP_SETPCAP: not root, nothing held to drop
			}
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	// Root's exec keeps what is inheritable whatever the bounding set
	// (its file's inheritable set counts as full): clear it too.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading the capabilities: %w", err)
	}
	if data[0].Inheritable|data[1].Inheritable != 0 {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("clearing the inheritable capabilities: %w", err)
		}
	}
	return nil
}

// setLimits applies the resource limits of p, soft and hard: the server
// cannot raise them again.
func setLimits(p Plan) error {
	var errs []error
	for _, l := range []struct {
		name     string
		resource int
		value    int64
		unit     uint64
	}{
		{"memoryMiB", unix.RLIMIT_DATA, p.MemoryMiB, 1 << 20},
		{"processes", unix.RLIMIT_NPROC, p.Processes, 1},
		{"openFiles", unix.RLIMIT_NOFILE, p.OpenFiles, 1},
	} {
		if l.value <= 0 {
			continue
		}
		v := uint64(l.value) * l.unit
		if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			errs = append(errs, fmt.Errorf("sandbox.%s: setrlimit: %w", l.name, err))
		}
	}
	return errors.Join(errs...)
}
