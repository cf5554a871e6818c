package ab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
)

// An A/B fails the run (exit 3) as gate does when either arm's server
// could not keep up with an undeclared open loop, naming the arm.
func TestOutcomeCheckOverload(t *testing.T) {
	arm := func(overloaded bool) *result.Result {
		o := &result.Overload{Requests: 200, OfferedRate: 12, ServedRate: 12}
		if overloaded {
			o.ServedRate, o.Overloaded = 8.6, true
		}
		return &result.Result{Scenarios: []result.ScenarioResult{{Name: "chat", Load: result.Load{Type: "poisson", Rate: 12},
			Repetitions: []result.Repetition{{Index: 1, Overload: o}}}}}
	}
	check := func(base, cand *result.Result) error { return (&Outcome{Base: base, Candidate: cand}).CheckOverload() }
	assert.NoError(t, check(arm(false), arm(false)))
	err := check(arm(false), arm(true))
	assert.Equal(t, exit.RunFailed, exit.Code(err))
	assert.ErrorContains(t, err, "candidate arm: the server could not keep up")
	err = check(arm(true), arm(false))
	assert.Equal(t, exit.RunFailed, exit.Code(err))
	assert.ErrorContains(t, err, "base arm: ")
}
