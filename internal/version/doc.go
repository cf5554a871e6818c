// Package version holds perfgate's version, set at build time with
// -ldflags "-X github.com/perfgate/perfgate/internal/version.Version=v1.2.3"
// and otherwise taken from the module's build information.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package version
