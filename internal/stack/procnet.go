package stack

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Bounds on what listeningAddrs reads of /proc, so that a stack of many
// processes, or a machine with a million connections, costs a readiness hint
// a bounded time: past them the hint names what it found so far.
const (
	// maxListenProcs is how many of the stack's processes are looked at.
	maxListenProcs = 256
	// maxListenFDs is how many open files of each process are looked at.
	maxListenFDs = 16384
	// maxNetTCPBytes is how much of each /proc/<pid>/net/tcp{,6} is read:
	// about 50,000 sockets at 150 bytes a line.
	maxNetTCPBytes = 8 << 20
)

// tcpListen is the state of a listening socket in /proc/net/tcp (TCP_LISTEN).
const tcpListen = "0A"

// listeningAddrs returns the TCP addresses ("127.0.0.1:18484", "[::]:8000")
// that the processes pids listen on, sorted, each once. It reads, for each
// process, the socket inodes of its open files (/proc/<pid>/fd) and the
// listening sockets of its network namespace (/proc/<pid>/net/tcp and tcp6),
// and keeps the sockets the processes hold. ok is false where it cannot
// tell: not Linux, or /proc could not be read for any of them. An empty
// list with ok true means the processes listen on no TCP port.
func listeningAddrs(pids []int) (addrs []string, ok bool) {
	if runtime.GOOS != "linux" || len(pids) == 0 {
		return nil, false
	}
	if len(pids) > maxListenProcs {
		pids = pids[:maxListenProcs]
	}
	held := map[uint64]bool{} // socket inodes the processes hold
	byNS := map[string]int{}  // network namespace → a pid in it, to read its tables once
	for _, pid := range pids {
		inodes, err := socketInodes(pid)
		if err != nil {
			continue // gone, or not ours to read
		}
		ok = true
		for _, ino := range inodes {
			held[ino] = true
		}
		ns, err := os.Readlink(fmt.Sprintf("%s/%d/ns/net", procRoot, pid))
		if err != nil {
			ns = "pid " + strconv.Itoa(pid)
		}
		if _, seen := byNS[ns]; !seen {
			byNS[ns] = pid
		}
	}
	if !ok {
		return nil, false
	}
	seen := map[string]bool{}
	addrs = []string{}
	for _, pid := range byNS {
		for _, table := range []string{"tcp", "tcp6"} {
			f, err := os.Open(fmt.Sprintf("%s/%d/net/%s", procRoot, pid, table))
			if err != nil {
				continue // no IPv6, or the process is gone
			}
			for _, l := range parseNetTCP(io.LimitReader(f, maxNetTCPBytes)) {
				if held[l.inode] && !seen[l.addr] {
					seen[l.addr] = true
					addrs = append(addrs, l.addr)
				}
			}
			_ = f.Close()
		}
	}
	slices.Sort(addrs)
	return addrs, true
}

// socketInodes returns the inodes of the sockets process pid holds open: the
// targets "socket:[12345]" of the links in /proc/<pid>/fd, at most
// maxListenFDs of them looked at.
func socketInodes(pid int) ([]uint64, error) {
	dir := fmt.Sprintf("%s/%d/fd", procRoot, pid)
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(maxListenFDs)
	if err != nil && len(names) == 0 && err != io.EOF {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []uint64
	for _, n := range names {
		target, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue // closed since
		}
		if ino, ok := socketInode(target); ok {
			out = append(out, ino)
		}
	}
	return out, nil
}

// socketInode parses a /proc/<pid>/fd link's target "socket:[12345]".
func socketInode(target string) (uint64, bool) {
	s, ok := strings.CutPrefix(target, "socket:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return 0, false
	}
	ino, err := strconv.ParseUint(s, 10, 64)
	return ino, err == nil
}

// netTCPListener is one listening socket of /proc/<pid>/net/tcp{,6}.
type netTCPListener struct {
	addr  string // host:port, as net.JoinHostPort writes it
	inode uint64
}

// parseNetTCP reads the listening sockets of a /proc/net/tcp or tcp6 table:
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	 0: 0100007F:4844 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 ...
//
// Lines it cannot parse are skipped.
func parseNetTCP(r io.Reader) []netTCPListener {
	var out []netTCPListener
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), 4096)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue // the header, or not listening
		}
		addr, ok := parseNetTCPAddr(f[1])
		if !ok {
			continue
		}
		ino, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		out = append(out, netTCPListener{addr: addr, inode: ino})
	}
	return out
}

// parseNetTCPAddr parses a local_address of /proc/net/tcp{,6}: the address
// as 32-bit words, each printed in hex in the machine's own byte order, a
// colon, and the port in hex.
func parseNetTCPAddr(s string) (string, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok || (len(host) != 8 && len(host) != 32) {
		return "", false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return "", false
	}
	raw, err := hex.DecodeString(host)
	if err != nil {
		return "", false
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(ip)
	a = a.Unmap()
	return net.JoinHostPort(a.String(), strconv.FormatUint(p, 10)), true
}

// listener is an Instance that can say which TCP addresses its processes
// listen on: a process stack, on Linux.
type listener interface {
	// listening returns the addresses, sorted; ok is false where it
	// cannot tell.
	listening() (addrs []string, ok bool)
}

var _ listener = (*process)(nil)

// listening returns the TCP addresses the stack's processes listen on.
func (p *process) listening() ([]string, bool) {
	if exited(p) {
		return nil, false
	}
	return listeningAddrs(p.pids())
}
