package stack

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// kernelHex writes an address the way /proc/net/tcp{,6} does: each 32-bit
// word of it, read in the machine's byte order, in hex.
func kernelHex(addr string) string {
	b := netip.MustParseAddr(addr).AsSlice()
	var s strings.Builder
	for i := 0; i < len(b); i += 4 {
		fmt.Fprintf(&s, "%08X", binary.NativeEndian.Uint32(b[i:]))
	}
	return s.String()
}

func TestParseNetTCP(t *testing.T) {
	line := func(sl int, addr string, port uint16, state string, inode int) string {
		return fmt.Sprintf("  %d: %s:%04X 00000000:0000 %s 00000000:00000000 00:00000000 00000000  1000        0 %d 1 0000000000000000 100 0 0 10 0\n",
			sl, kernelHex(addr), port, state, inode)
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		line(0, "127.0.0.1", 18484, "0A", 1001) +
		line(1, "0.0.0.0", 8000, "0A", 1002) +
		line(2, "127.0.0.1", 18485, "01", 1003) + // established: not a listener
		line(3, "::1", 9000, "0A", 1004) +
		line(4, "::", 9001, "0A", 1005) +
		line(5, "::ffff:10.1.2.3", 9002, "0A", 1006) +
		line(6, "127.0.0.1", 9003, "0A", 0) + // no inode: a socket in TIME_WAIT's shape
		"  7: garbage\n" +
		"  8: ZZZZZZZZ:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1007 1\n" +
		strings.Repeat("x", 5000) + "\n" // a line too long: the rest is not read
	got := parseNetTCP(strings.NewReader(table))
	want := []netTCPListener{
		{"127.0.0.1:18484", 1001},
		{"0.0.0.0:8000", 1002},
		{"[::1]:9000", 1004},
		{"[::]:9001", 1005},
		{"10.1.2.3:9002", 1006},
	}
	assert.Equal(t, want, got)
}

func TestParseNetTCPAddrAsLinuxWritesIt(t *testing.T) {
	// What /proc/net/tcp shows for 127.0.0.1:18484 on a little-endian
	// machine (x86, arm64).
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		got, ok := parseNetTCPAddr("0100007F:4834")
		assert.True(t, ok)
		assert.Equal(t, "127.0.0.1:18484", got)
	}
	for _, bad := range []string{"", "0100007F", "0100007F:", "0100007F:XYZ", "0100007:0050", "0100007F:123456", "GG00007F:0050"} {
		_, ok := parseNetTCPAddr(bad)
		assert.False(t, ok, "parseNetTCPAddr(%q)", bad)
	}
}

func TestSocketInode(t *testing.T) {
	for target, want := range map[string]uint64{"socket:[12345]": 12345, "socket:[0]": 0} {
		got, ok := socketInode(target)
		assert.True(t, ok, target)
		assert.Equal(t, want, got, target)
	}
	for _, bad := range []string{"/dev/null", "pipe:[123]", "socket:[", "socket:[x]", "socket:123", "anon_inode:[eventfd]"} {
		_, ok := socketInode(bad)
		assert.False(t, ok, "socketInode(%q)", bad)
	}
}

func TestListeningAddrsCannotTell(t *testing.T) {
	addrs, ok := listeningAddrs(nil)
	assert.False(t, ok)
	assert.Nil(t, addrs)
	addrs, ok = listeningAddrs([]int{1 << 30}) // no such process
	assert.False(t, ok)
	assert.Nil(t, addrs)
}
