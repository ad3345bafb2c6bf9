package sandbox

import "golang.org/x/sys/unix"

// auditArch is this architecture in seccomp_data.arch; x32Bit marks the
// syscall numbers of the x32 ABI.
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)
