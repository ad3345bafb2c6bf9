//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
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

// StartError explains err, the failed start of the re-execution for p:
// without network, the kernel may refuse the namespaces, which exec
// reports only as "operation not permitted" or the like.
func (p Plan) StartError(err error) error {
	if p.Network || !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) &&
		!errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	// untested: needs a kernel that refuses unprivileged user namespaces
	return fmt.Errorf("sandbox: network: false needs a user and a network namespace, and the kernel refused them "+
		"(unprivileged user namespaces disabled or limited: kernel.unprivileged_userns_clone, user.max_user_namespaces, AppArmor): %w", err)
}

// userMay reports whether mcpbridge's user may read path (or write it, or
// create it in its directory): only then did the sandbox, not the file's
// permissions, refuse it.
func userMay(path string, write bool) bool {
	if !write {
		return unix.Access(path, unix.R_OK) == nil
	}
	if _, err := os.Lstat(path); err != nil {
		path = filepath.Dir(path)
	}
	return unix.Access(path, unix.W_OK) == nil
}
