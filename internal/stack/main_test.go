package stack

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/config"
)

func TestMain(m *testing.M) {
	// Process stacks run under a guard that is this test binary, started
	// again; a test of perfgate's death runs it as perfgate.
	MaybeGuard()
	if os.Getenv(testParentEnv) == "1" {
		os.Exit(runTestParent())
	}
	if os.Getenv(testListenEnv) == "1" {
		os.Exit(runTestListener())
	}
	os.Exit(m.Run())
}

// A test of perfgate's death runs this test binary as perfgate: it starts
// the stack that testParentScriptEnv holds, says "started" on stdout, and
// waits to be killed. Should the test end first, its stdin ends, and it stops
// the stack like perfgate would.
const (
	testParentEnv       = "PERFGATE_STACK_TEST_PARENT"
	testParentScriptEnv = "PERFGATE_STACK_TEST_SCRIPT"
	testParentLogEnv    = "PERFGATE_STACK_TEST_LOG"
)

// A test of the readiness hint runs this test binary as a stack's process
// that listens on a loopback port: it says "listening on <addr>" on stdout
// and accepts (and drops) connections until it is stopped, or for two
// minutes at most, should a test leave it behind.
const testListenEnv = "PERFGATE_STACK_TEST_LISTEN"

func runTestListener() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening on %s\n", l.Addr())
	time.AfterFunc(2*time.Minute, func() { os.Exit(0) })
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		_ = c.Close()
	}
}

func runTestParent() int {
	cfg := config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{
		Command: []string{"sh", "-c", os.Getenv(testParentScriptEnv)},
	}}
	inst, err := Start(context.Background(), cfg, Options{LogPath: os.Getenv(testParentLogEnv), Grace: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("started")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = inst.Stop(context.Background())
	return 0
}
