// Package textsafe makes untrusted text safe to print on a terminal or in a
// CI runner's log.
//
// perfgate prints what a model, an engine, a result file or a pull request's
// author controls: a model id, an engine's version, a server's error text.
// On a terminal, an escape sequence in such text can rewrite the screen or
// hide a link; in a GitHub Actions log, a line beginning with "::" (or
// holding "##[") is a workflow command the runner executes, which could set
// an output, fake an annotation or stop command processing. Two layers
// prevent both:
//
//   - Line and Cut clean one value: every control character (C0, DEL, C1,
//     newlines and tabs included), every Unicode format character (bidi
//     overrides, zero-width characters) and the line and paragraph
//     separators become spaces. Lines does the same but keeps newlines and
//     tabs, for multi-line text.
//   - Writer cleans a whole stream at the edge: cmd/perfgate wraps its
//     stdout and stderr in one, so every line perfgate prints has no
//     control or format characters but newlines and tabs, and no line
//     begins with "::" or holds "##[" unless perfgate itself wrote it as a
//     workflow command through Commands.
//
// Characters become spaces rather than vanish, so that cleaning never joins
// two halves of a command (":\u200b:" is ": :", not "::").
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package textsafe
