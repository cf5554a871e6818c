package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/workload"
)

// expandHeaders reads target.headers' ${VAR}s from the environment (o's
// LookupEnv, else the process's) once, as the run starts: an unset or
// empty variable is a usage error (exit 2) naming it and the header.
func expandHeaders(cfg *config.Config, o Options) (config.ExpandedHeaders, error) {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	h, err := cfg.Target.ExpandHeaders(lookup)
	if err != nil {
		return config.ExpandedHeaders{}, exit.UsageError(err)
	}
	return h, nil
}

// CheckHeaders says, before anything starts, whether the environment has
// the variables cfg's target.headers name (as Run and Open read them, from
// o.LookupEnv or the process's): a *config.HeaderVarError as exit.UsageError
// when not. perfgate ab checks both arms' before it starts either stack.
func CheckHeaders(cfg *config.Config, o Options) error {
	_, err := expandHeaders(cfg, o)
	return err
}

// withoutSecrets is models less every id that holds a value the headers
// took from the environment (a server that echoes the key as a model id),
// and how many it left out. Such an id would otherwise reach the result, the
// terminal and the comment; it is dropped rather than redacted, since a
// model named "[redacted]" is no model to ask for.
func withoutSecrets(models []string, h config.ExpandedHeaders) (kept []string, dropped int) {
	if !h.HasSecrets() {
		return models, 0
	}
	kept = make([]string, 0, len(models))
	for _, m := range models {
		if h.Redact(m) == m {
			kept = append(kept, m)
		}
	}
	return kept, len(models) - len(kept)
}

// refusedStatus is the HTTP status of a server refusing the credentials
// (401 unauthorized, 403 forbidden) when err is one, from a request or a
// health check, else 0.
func refusedStatus(err error) int {
	status := 0
	var he *stack.HealthStatusError
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Kind == client.ErrHTTP:
		status = ce.Status
	case errors.As(err, &he):
		status = he.Status
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return status
	}
	return 0
}

// CredentialsError says the server refused the credentials the target's
// headers carry: a 401 or 403 that no wait or retry will change.
type CredentialsError struct {
	// Status is the HTTP status, 401 or 403.
	Status int
	// Headers are the names of the headers sent (never their values).
	Headers []string
	// Err is what failed: the readiness wait, the models lookup, a
	// repetition whose every request was refused.
	Err error
}

func (e *CredentialsError) Error() string {
	sent := "it sets none"
	if len(e.Headers) > 0 {
		sent = "it sends " + strings.Join(e.Headers, ", ")
	}
	return fmt.Sprintf("the server refused the credentials (HTTP %d): check target.headers or --header (%s): %v", e.Status, sent, e.Err)
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// credentials wraps err in a *CredentialsError when status is a refusal
// (refusedStatus), else returns it as it is.
func (s *session) credentials(status int, err error) error {
	if status == 0 || err == nil {
		return err
	}
	var ce *CredentialsError
	if errors.As(err, &ce) {
		return err
	}
	return &CredentialsError{Status: status, Headers: s.headers.Names(), Err: err}
}

// refusals watches the responses a run's requests get for credentials the
// server refuses: how many in a row were a 401 or 403, up to the last.
type refusals struct {
	run.Sender
	streak atomic.Int64 // refusals since the last other answer
	status atomic.Int64 // the last refusal's status
	total  atomic.Int64 // answers seen (requests perfgate cancelled got none)
}

// Do sends req and counts its answer.
func (r *refusals) Do(ctx context.Context, req *workload.Request, requestID string) *client.Response {
	resp := r.Sender.Do(ctx, req, requestID)
	switch {
	case resp == nil || resp.Err == nil:
		r.total.Add(1)
		r.streak.Store(0)
	case resp.Err.Kind == client.ErrCanceled:
		// Cut short by perfgate (a drain, the end of the run): no answer.
	case refusedStatus(resp.Err) != 0:
		r.total.Add(1)
		r.status.Store(int64(refusedStatus(resp.Err)))
		r.streak.Add(1)
	default:
		r.total.Add(1)
		r.streak.Store(0)
	}
	return resp
}

// explain names the refused credentials in a scenario's error when they
// are why it failed: every request the scenario sent was refused, or every
// one of the repetition that broke (a *run.BrokenError that completed
// none). Other errors are returned as they are.
func (s *session) explain(r *refusals, err error) error {
	if err == nil || r == nil {
		return err
	}
	streak := r.streak.Load()
	if streak == 0 {
		return err
	}
	all := streak == r.total.Load()
	var broken *run.BrokenError
	if errors.As(err, &broken) && broken.Rep.Completed == 0 && streak >= int64(broken.Rep.Sent) {
		all = true
	}
	if !all {
		return err
	}
	return s.credentials(int(r.status.Load()), err)
}
