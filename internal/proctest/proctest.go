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

// Proc is what a test needs to know of a process, from /proc/<pid>/stat.
type Proc struct {
	PID, PPID, PGRP, Session int
	State                    byte // R, S, D, Z, ...
	Comm                     string
}

// Read reads /proc/<pid>/stat; ok is false when it cannot (no such process,
// no /proc).
func Read(pid int) (p Proc, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, false
	}
	// "pid (comm) state ppid pgrp session ...": comm may hold spaces and parens.
	open, i := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || i < open {
		return Proc{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 4 || f[0] == "" {
		return Proc{}, false
	}
	p = Proc{PID: pid, State: f[0][0], Comm: string(data[open+1 : i])}
	var err1, err2, err3 error
	p.PPID, err1 = strconv.Atoi(f[1])
	p.PGRP, err2 = strconv.Atoi(f[2])
	p.Session, err3 = strconv.Atoi(f[3])
	return p, err1 == nil && err2 == nil && err3 == nil
}

// State reads a process's state letter and process group from
// /proc/<pid>/stat; ok is false when it cannot (no such process, no /proc).
func State(pid int) (state byte, pgrp int, ok bool) {
	p, ok := Read(pid)
	return p.State, p.PGRP, ok
}

// Descendants returns the live processes descended from pid (its children,
// theirs, and so on), zombies left out; nil without /proc.
func Descendants(pid int) []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]Proc{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Read(n); ok {
			children[p.PPID] = append(children[p.PPID], p)
		}
	}
	var out []Proc
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if seen[c.PID] {
				continue
			}
			seen[c.PID] = true
			queue = append(queue, c.PID)
			if c.State != 'Z' {
				out = append(out, c)
			}
		}
	}
	return out
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
