package reportfile

import (
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// ofRepetitions is what get finds in each repetition of s that has it (the
// sessions' figures, a step load's recovery); nil when s is nil or none has.
func ofRepetitions[T any](s *result.ScenarioResult, get func(*result.Repetition) *T) []*T {
	if s == nil {
		return nil
	}
	var out []*T
	for i := range s.Repetitions {
		if x := get(&s.Repetitions[i]); x != nil {
			out = append(out, x)
		}
	}
	return out
}

// medianOver is the median of value over the reps that have it (a finite
// one); nil when none has.
func medianOver[T any](reps []*T, value func(*T) (float64, bool)) *float64 {
	var xs []float64
	for _, r := range reps {
		if x, ok := value(r); ok {
			xs = append(xs, x)
		}
	}
	m := stat.FiniteMedian(xs)
	if !finite(m) {
		return nil
	}
	return &m
}
