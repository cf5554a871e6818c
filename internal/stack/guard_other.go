//go:build !linux

package stack

import (
	"fmt"
	"os"
)

// runGuard: the stack guard exists on Linux only; elsewhere a process stack
// is perfgate's own child and nothing starts a guard.
func runGuard([]string) int {
	fmt.Fprintln(os.Stderr, "perfgate: the stack guard runs on Linux only")
	return 2
}
