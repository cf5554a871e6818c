// Package httpguard holds the rules every HTTP client of perfgate keeps
// towards the server under test and its neighbours (the readiness probe, the
// identity probes, the engine's metrics page, a DCGM exporter, the load
// itself): the target is the target.
//
// A redirect is never followed. A 3xx answer is handed back as it is (see
// NoRedirects) and turned into a *RedirectError that names where it pointed
// (see Redirected): following it would measure another server while the
// result names the configured one, and would send target.headers (API keys)
// to another origin.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package httpguard
