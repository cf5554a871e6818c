// Package layers holds the test that keeps perfgate's import rules true:
// every package has a layer, and imports only packages of lower layers
// (docs/architecture.md lists them and says why). It has no code of its
// own.
package layers
