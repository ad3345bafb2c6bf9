//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// installFilter installs, on every thread, a seccomp filter that makes
// syscalls Landlock does not cover fail with EACCES:
//
//   - always, the kernel keyrings (keyctl, add_key, request_key): the
//     user's keyring holds what other programs stored for the user;
//   - without network, socket(AF_UNIX, ...), a socketpair that is no
//     stream or seqpacket one, and io_uring_setup: a network namespace
//     does not separate pathname UNIX sockets (the Docker socket, the
//     session bus, journald) and Landlock restricts them only from ABI 9;
//     a datagram socket of a pair may still send to any of them (sendto;
//     AF_UNIX's SOCK_RAW is a datagram socket too), and io_uring could
//     create sockets past the filter. A stream or seqpacket pair stays
//     allowed: it connects nothing outside, and runtimes use it for their
//     children's stdio.
//
// Syscalls of another architecture (32-bit, x32) are refused whole: they
// would bypass the checks by number.
func installFilter(network bool) error {
	if auditArch == 0 {
		return fmt.Errorf("no seccomp filter is written for this architecture") // untested: amd64 and arm64 have one
	}
	prog, err := bpf.Assemble(filterProgram(network))
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

// filterProgram is the BPF program of installFilter. Its last two
// instructions are "allow" and "deny"; every check jumps to one of them
// or falls through to the next.
func filterProgram(network bool) []bpf.Instruction {
	denied := []uint32{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}
	if !network {
		denied = append(denied, unix.SYS_IO_URING_SETUP)
	}
	type jump struct {
		cond     bpf.JumpTest
		val      uint32
		toDeny   bool // on true: deny; on false: fall through
		elseDeny bool // on false: deny; on true: fall through
		orAllow  bool // on false: allow
		over     int  // on false: skip this many instructions
	}
	var body []any // bpf.Instruction or jump
	body = append(body,
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		jump{cond: bpf.JumpEqual, val: auditArch, elseDeny: true},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		jump{cond: bpf.JumpGreaterOrEqual, val: x32Bit, toDeny: true},
	)
	for _, nr := range denied {
		body = append(body, jump{cond: bpf.JumpEqual, val: nr, toDeny: true})
	}
	if !network {
		body = append(body,
			jump{cond: bpf.JumpEqual, val: unix.SYS_SOCKET, over: 2},
			bpf.LoadAbsolute{Off: 16, Size: 4}, // the low half of args[0], the domain
			jump{cond: bpf.JumpEqual, val: unix.AF_UNIX, toDeny: true},
			bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr again
			jump{cond: bpf.JumpEqual, val: unix.SYS_SOCKETPAIR, orAllow: true},
			bpf.LoadAbsolute{Off: 24, Size: 4},            // the low half of args[1], the type
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf}, // without SOCK_NONBLOCK and SOCK_CLOEXEC
			// Stream and seqpacket pairs only: the kernel makes an AF_UNIX
			// SOCK_RAW a datagram socket too.
			jump{cond: bpf.JumpNotEqual, val: unix.SOCK_STREAM, orAllow: true},
			jump{cond: bpf.JumpEqual, val: unix.SOCK_SEQPACKET, elseDeny: true},
		)
	}
	allow, deny := len(body), len(body)+1
	out := make([]bpf.Instruction, 0, len(body)+2)
	for i, b := range body {
		j, ok := b.(jump)
		if !ok {
			out = append(out, b.(bpf.Instruction))
			continue
		}
		in := bpf.JumpIf{Cond: j.cond, Val: j.val}
		next := i + 1
		switch {
		case j.toDeny:
			in.SkipTrue = uint8(deny - next)
		case j.elseDeny:
			in.SkipFalse = uint8(deny - next)
		case j.orAllow:
			in.SkipFalse = uint8(allow - next)
		case j.over > 0:
			in.SkipFalse = uint8(j.over)
		}
		out = append(out, in)
	}
	return append(out,
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)})
}
