// Package stack owns the life of the serving stack under test: it starts it (a
// process in its own process group, under a guard that stops all of it should
// perfgate die; a container through the Docker Engine API, labelled with its
// owner so that the next run removes it if perfgate dies; or nothing for an
// external URL), refusing when something already answers at the
// target, waits until it is truly ready, watches it for crashes
// while it is measured, asks it what it is, and stops it, leaving nothing
// behind whatever happens in between, SIGKILL of perfgate included.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package stack
