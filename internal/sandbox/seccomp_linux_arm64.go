package sandbox

import "golang.org/x/sys/unix"

// auditArch is this architecture in seccomp_data.arch; arm64 has no x32
// ABI, and no syscall number reaches x32Bit.
const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0x40000000
)
