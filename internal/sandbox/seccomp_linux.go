//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// denyUnixSockets installs a seccomp filter, on every thread, that makes
// socket(AF_UNIX, ...) and io_uring_setup fail with EACCES. Without
// network the server must not reach a daemon through a pathname UNIX socket
// (the Docker socket, the session bus), which Landlock restricts only from
// ABI 9 and a network namespace not at all. socketpair stays allowed: it
// connects nothing outside, and runtimes use it for their children's
// stdio. io_uring could create sockets past the filter. Syscalls of another
// architecture (32-bit, x32) are refused whole: they would bypass the
// checks by number.
func denyUnixSockets() error {
	if auditArch == 0 {
		return fmt.Errorf("no seccomp filter for this architecture; pathname UNIX sockets stay reachable") // untested: amd64 and arm64 have one
	}
	const (
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		allow = unix.SECCOMP_RET_ALLOW
	)
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipFalse: 7},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipTrue: 5},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IO_URING_SETUP, SkipTrue: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipFalse: 2},
		bpf.LoadAbsolute{Off: 16, Size: 4}, // the low half of args[0], the domain
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.RetConstant{Val: deny},
	})
	if err != nil {
		return fmt.Errorf("seccomp: %w", err) // untested: the program is fixed
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
