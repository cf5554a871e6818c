// Package version holds perfgate's version, set at build time with
// -ldflags "-X github.com/perfgate/perfgate/internal/version.Version=v1.2.3"
// and otherwise taken from the module's build information.
package version

import "runtime/debug"

// Version is perfgate's version string.
var Version = ""

// String returns the version: the linked-in one, else the module version, else "dev".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
