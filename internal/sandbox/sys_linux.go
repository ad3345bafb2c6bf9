//go:build linux

package sandbox

import (
	"os"
	"syscall"
)

// SysProcAttr adjusts attr, the attributes of the re-executed process, for
// p: without network it gets a user namespace (needed to create the
// network namespace unprivileged) mapping only our own IDs, and a network
// namespace whose one interface, the loopback, is down. attr's other
// settings (process group, parent-death signal) are kept.
func (p Plan) SysProcAttr(attr *syscall.SysProcAttr) {
	if p.Network {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}
