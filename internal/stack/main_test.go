package stack

import (
	"context"
	"fmt"
	"io"
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
