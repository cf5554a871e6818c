// Package proctest tells tests whether processes are really gone. It exists
// for the tests of perfgate's stack handling, which must prove that no
// process of a stopped stack is left: signal 0 alone cannot, because an
// orphan lingers as a zombie until init reaps it, and in some sandboxes init
// never does.
package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// State reads a process's state letter and process group from
// /proc/<pid>/stat; ok is false when it cannot (no such process, no /proc).
func State(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}

// Alive says whether pid is a live process. A zombie counts as gone: an
// orphan is reaped by init, asynchronously, and in some sandboxes init never
// reaps at all, so signal 0 alone would find the dead "alive" forever.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	state, _, ok := State(pid)
	return !ok || state != 'Z' // no /proc: trust kill
}

// GroupAlive says whether any live process is in process group pgid,
// zombies counting as gone as in Alive.
func GroupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc: trust kill
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := State(pid); ok && pgrp == pgid && state != 'Z' {
			return true
		}
	}
	return false
}
