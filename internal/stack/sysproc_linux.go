package stack

import "syscall"

// sysProcAttr puts the stack in a process group of its own (so Stop can
// signal all of it) and asks the kernel to SIGKILL the leader should perfgate
// die without stopping it (kill -9, OOM): no orphaned engine keeps the GPU.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
