// Package suggest finds the name a user probably meant: the "did you mean"
// of error messages about unknown keys and fields.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package suggest
