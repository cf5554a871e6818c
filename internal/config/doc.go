// Package config loads perfgate.yaml: it decodes strictly (an unknown key is an
// error with its line), applies the documented defaults (defaults.go is the one
// place they live), and validates every field, reporting each problem with its
// field path and line (`scenarios[1].load.rate: must be > 0, got -2`).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package config
