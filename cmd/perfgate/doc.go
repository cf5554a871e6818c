// Command perfgate gates pull requests on the performance and quality of an
// LLM serving stack. See README.md; `perfgate --help` lists the subcommands.
//
// main only wires the process to Main: signals to a context, the error to an
// exit code (internal/exit is the one place that mapping lives). The same
// binary is also the guard of a process stack (stack.MaybeGuard), a hidden
// mode entered before anything else.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package main
