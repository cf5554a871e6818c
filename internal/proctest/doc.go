// Package proctest tells tests whether processes are really gone. It exists
// for the tests of perfgate's stack handling, which must prove that no
// process of a stopped stack is left: signal 0 alone cannot, because an
// orphan lingers as a zombie until init reaps it, and in some sandboxes init
// never does.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package proctest
