package exit

import (
	"errors"
	"fmt"
)

// Exit codes.
const (
	OK         = 0 // the run passed
	Regression = 1 // a gate found a significant regression beyond tolerance
	Usage      = 2 // bad flags, config, workload or other input
	RunFailed  = 3 // the run itself failed: stack down, no successful request, ...
)

// Error attaches an exit code to an error.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// WithCode wraps err so that Code reports code; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// UsageError marks err as bad input (exit 2).
func UsageError(err error) error { return WithCode(Usage, err) }

// UsageUnlessCoded is err as a usage error (exit 2), unless it already
// carries a code (a comparison that found the candidate's run failed
// says exit 3 itself): what a refused comparison returns.
func UsageUnlessCoded(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return UsageError(err)
}

// RunError marks err as a failed run (exit 3).
func RunError(err error) error { return WithCode(RunFailed, err) }

// Code returns the exit code for err: 0 for nil, the attached code for an
// *Error anywhere in its chain, and RunFailed for anything else.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return RunFailed
}

// The outcomes of a verdict, as compare names them (stat.Outcome's values).
const (
	OutcomePass         = "pass"
	OutcomeInconclusive = "inconclusive"
	OutcomeRegression   = "regression"
)

// The values of --fail-on: which outcomes exit 1.
const (
	// FailOnConfig fails a regression, and an inconclusive verdict unless
	// its compare.on_inconclusive is pass.
	FailOnConfig = "config"
	// FailOnRegression fails a regression only.
	FailOnRegression = "regression"
	// FailOnInconclusive fails a regression or an inconclusive verdict.
	FailOnInconclusive = "inconclusive"
	// FailOnNever fails nothing: the verdict is reported, not enforced.
	FailOnNever = "never"
)

// FailOnValues are what --fail-on takes, in the order its help lists them.
var FailOnValues = []string{FailOnConfig, FailOnRegression, FailOnInconclusive, FailOnNever}

// Policy is what decides whether an outcome fails the process.
type Policy struct {
	// FailOn is one of FailOnValues; "" (and any value not among them,
	// which the flag's check refuses first) is FailOnConfig.
	FailOn string
	// OnInconclusive is the verdict's compare.on_inconclusive, fail or
	// pass: what an inconclusive verdict does under FailOnConfig. ""
	// (a verdict from before the setting) is fail, the default.
	OnInconclusive string
}

// onInconclusivePass is compare.on_inconclusive's value that lets an
// inconclusive verdict pass (config.InconclusivePass; report's tests check
// that the two agree).
const onInconclusivePass = "pass"

// ForOutcome is the exit code of a verdict with outcome under policy p:
// Regression when p fails the outcome, else OK. An outcome it does not
// know (none of pass, inconclusive, regression) fails under no policy, as
// before this mapping was one function.
func ForOutcome(outcome string, p Policy) int {
	var fails bool
	switch p.FailOn {
	case FailOnNever:
		fails = false
	case FailOnRegression:
		fails = outcome == OutcomeRegression
	case FailOnInconclusive:
		fails = outcome == OutcomeRegression || outcome == OutcomeInconclusive
	default:
		fails = outcome == OutcomeRegression || (outcome == OutcomeInconclusive && p.OnInconclusive != onInconclusivePass)
	}
	if fails {
		return Regression
	}
	return OK
}

// OutcomeError is the error that makes the process exit with
// ForOutcome(outcome, p), or nil when that is OK. It says why: "regression",
// or what made an inconclusive verdict fail ("inconclusive, and
// compare.on_inconclusive is fail", "inconclusive, and --fail-on
// inconclusive").
func OutcomeError(outcome string, p Policy) error {
	code := ForOutcome(outcome, p)
	switch {
	case code == OK:
		return nil
	case outcome == OutcomeRegression:
		return WithCode(code, errors.New("regression"))
	}
	why := "--fail-on " + p.FailOn
	if p.FailOn != FailOnInconclusive {
		setting := p.OnInconclusive
		if setting == "" {
			setting = "fail"
		}
		why = "compare.on_inconclusive is " + setting
	}
	return WithCode(code, fmt.Errorf("inconclusive, and %s", why))
}
