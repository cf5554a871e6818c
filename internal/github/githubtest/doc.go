// Package githubtest is a fake of the slice of GitHub's REST API that
// perfgate's commenter uses, for tests of internal/github and of the CLI's
// whole gate-and-comment path. It listens on 127.0.0.1 only.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package githubtest
