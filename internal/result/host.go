package result

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// LocalHost describes the machine this process runs on. Fields it cannot read
// (outside Linux, say) are left empty rather than guessed.
func LocalHost() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		if n, err := strconv.ParseUint(strings.TrimSuffix(kb, " kB"), 10, 64); err == nil {
			h.MemoryBytes = n * 1024
		}
	}
	return h
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
