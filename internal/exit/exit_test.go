package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain error is a failed run", base, RunFailed},
		{"usage", UsageError(base), Usage},
		{"run", RunError(base), RunFailed},
		{"regression", WithCode(Regression, base), Regression},
		{"wrapped usage", fmt.Errorf("load config: %w", UsageError(base)), Usage},
	}
	for _, tt := range tests {
		if got := Code(tt.err); got != tt.want {
			t.Errorf("%s: Code(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	if WithCode(Usage, nil) != nil {
		t.Errorf("WithCode(Usage, nil) != nil")
	}
	if !errors.Is(UsageError(base), base) {
		t.Errorf("UsageError does not unwrap to its cause")
	}
}

func TestForOutcome(t *testing.T) {
	const (
		pass = OutcomePass
		inc  = OutcomeInconclusive
		reg  = OutcomeRegression
	)
	tests := []struct {
		outcome string
		policy  Policy
		want    int
	}{
		// config: compare.on_inconclusive decides an inconclusive verdict.
		{pass, Policy{}, OK},
		{reg, Policy{}, Regression},
		{inc, Policy{}, Regression},
		{inc, Policy{OnInconclusive: "fail"}, Regression},
		{inc, Policy{OnInconclusive: "pass"}, OK},
		{reg, Policy{OnInconclusive: "pass"}, Regression},
		{inc, Policy{FailOn: FailOnConfig, OnInconclusive: "pass"}, OK},
		{inc, Policy{FailOn: FailOnConfig, OnInconclusive: "fail"}, Regression},
		{pass, Policy{FailOn: FailOnConfig}, OK},
		// regression: only a regression fails.
		{reg, Policy{FailOn: FailOnRegression}, Regression},
		{inc, Policy{FailOn: FailOnRegression, OnInconclusive: "fail"}, OK},
		{pass, Policy{FailOn: FailOnRegression}, OK},
		// inconclusive: anything but a pass fails, whatever the config says.
		{reg, Policy{FailOn: FailOnInconclusive}, Regression},
		{inc, Policy{FailOn: FailOnInconclusive, OnInconclusive: "pass"}, Regression},
		{pass, Policy{FailOn: FailOnInconclusive}, OK},
		// never: nothing fails.
		{reg, Policy{FailOn: FailOnNever}, OK},
		{inc, Policy{FailOn: FailOnNever, OnInconclusive: "fail"}, OK},
		{pass, Policy{FailOn: FailOnNever}, OK},
		// An outcome no verdict has fails nothing, under any policy.
		{"bogus", Policy{}, OK},
		{"bogus", Policy{FailOn: FailOnInconclusive}, OK},
		{"", Policy{FailOn: FailOnRegression}, OK},
	}
	for _, tt := range tests {
		if got := ForOutcome(tt.outcome, tt.policy); got != tt.want {
			t.Errorf("ForOutcome(%q, %+v) = %d, want %d", tt.outcome, tt.policy, got, tt.want)
		}
	}
}

func TestOutcomeError(t *testing.T) {
	tests := []struct {
		outcome string
		policy  Policy
		want    string // "" for no error
	}{
		{OutcomePass, Policy{}, ""},
		{OutcomeInconclusive, Policy{OnInconclusive: "pass"}, ""},
		{OutcomeRegression, Policy{FailOn: FailOnNever}, ""},
		{OutcomeRegression, Policy{}, "regression"},
		{OutcomeRegression, Policy{FailOn: FailOnInconclusive}, "regression"},
		{OutcomeInconclusive, Policy{OnInconclusive: "fail"}, "inconclusive, and compare.on_inconclusive is fail"},
		{OutcomeInconclusive, Policy{}, "inconclusive, and compare.on_inconclusive is fail"},
		{OutcomeInconclusive, Policy{FailOn: FailOnConfig}, "inconclusive, and compare.on_inconclusive is fail"},
		{OutcomeInconclusive, Policy{FailOn: FailOnInconclusive, OnInconclusive: "pass"}, "inconclusive, and --fail-on inconclusive"},
	}
	for _, tt := range tests {
		err := OutcomeError(tt.outcome, tt.policy)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("OutcomeError(%q, %+v) = %v, want nil", tt.outcome, tt.policy, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("OutcomeError(%q, %+v) = %v, want %q", tt.outcome, tt.policy, err, tt.want)
		case err != nil && Code(err) != ForOutcome(tt.outcome, tt.policy):
			t.Errorf("Code(OutcomeError(%q, %+v)) = %d, want ForOutcome's %d", tt.outcome, tt.policy, Code(err), ForOutcome(tt.outcome, tt.policy))
		}
	}
}

// A refused comparison is bad input (exit 2) unless it already says what
// it was: a candidate's failed run stays exit 3.
func TestUsageUnlessCoded(t *testing.T) {
	if got := Code(UsageUnlessCoded(errors.New("mismatch"))); got != Usage {
		t.Errorf("plain error: exit %d, want %d", got, Usage)
	}
	if got := Code(UsageUnlessCoded(fmt.Errorf("compare: %w", RunError(errors.New("nothing timed"))))); got != RunFailed {
		t.Errorf("a run's error: exit %d, want %d", got, RunFailed)
	}
	if UsageUnlessCoded(nil) != nil {
		t.Error("nil is nil")
	}
}
