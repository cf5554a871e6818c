package reportfile

import "github.com/perfgate/perfgate/internal/result"

// OverloadData is a scenario's sustainable-load verdict on both sides: set
// where a side's server could not keep up with the offered rate in at least
// half its repetitions (result.OverloadVerdict.Any); nil when neither
// side's could, and in reports from before the overload detector.
type OverloadData struct {
	Baseline  *result.OverloadVerdict `json:"baseline,omitempty"`
	Candidate *result.OverloadVerdict `json:"candidate,omitempty"`
}

// overloadData is the overload verdicts of a scenario's sides; nil when
// neither was overloaded.
func overloadData(bs, cs *result.ScenarioResult) *OverloadData {
	side := func(s *result.ScenarioResult) *result.OverloadVerdict {
		if s == nil {
			return nil
		}
		if v := s.Overload(); v.Any() {
			return &v
		}
		return nil
	}
	d := OverloadData{Baseline: side(bs), Candidate: side(cs)}
	if d.Baseline == nil && d.Candidate == nil {
		return nil
	}
	return &d
}
