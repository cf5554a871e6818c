package stack

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is what perfgate reads of a process from /proc/<pid>/stat (Linux).
type procStat struct {
	pid   int
	comm  string // the command name, as the kernel keeps it (15 bytes at most)
	state byte   // R, S, D, Z, T, ...
	ppid  int
	pgrp  int
	start uint64 // when it started, in clock ticks since boot: with pid, names one process for good
}

// procRoot is where /proc is; a variable so that tests can point it elsewhere.
var procRoot = "/proc"

// readProcStat reads /proc/<pid>/stat; ok is false when it cannot (the
// process is gone, or there is no /proc).
func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(pid, data)
}

// parseProcStat parses the text of /proc/<pid>/stat: "pid (comm) state ppid
// pgrp ...", where comm may hold spaces and parentheses.
func parseProcStat(pid int, data []byte) (procStat, bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(string(data[end+1:]))
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime: starttime is the 20th field after comm.
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, comm: string(data[open+1 : end]), state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, true
}

// allProcs reads the stat of every process in /proc; nil when there is no
// /proc. Processes that vanish while it reads are left out.
func allProcs() []procStat {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	out := make([]procStat, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// descendantsOf returns the live (not zombie) descendants of pid among
// procs, found by following parent links down from pid.
func descendantsOf(pid int, procs []procStat) []procStat {
	children := map[int][]procStat{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procStat
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if seen[c.pid] {
				continue // a cycle cannot happen, but a torn read of /proc can look like one
			}
			seen[c.pid] = true
			queue = append(queue, c.pid)
			if c.state != 'Z' {
				out = append(out, c)
			}
		}
	}
	return out
}
