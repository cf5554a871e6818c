// Package reportfile is the report file (report.json, schema
// perfgate/report/v1): a gate's verdict with what every rendering of it
// needs besides — each latency metric's distribution on both sides, each
// scenario's promoted history, telemetry, capacity, sweeps, sessions,
// overload and warm-up notes, and what the candidate measured. It builds
// the document from a verdict and its results (New), writes it atomically
// (Write) and reads it back bounded and checked (Read), and decides the
// exit code of several documents together (ExitCode).
//
// It is one of the saved formats, beside internal/result; internal/report
// renders documents for people and never builds one.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package reportfile
