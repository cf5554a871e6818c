//go:build unix && !linux

package stack

import "syscall"

// sysProcAttr puts the stack in a process group of its own, so Stop can
// signal all of it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
