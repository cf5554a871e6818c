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
