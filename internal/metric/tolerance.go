package metric

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how much worse a metric may get before a significant change
// counts as a regression: relative (`+10%` of the baseline) or absolute in the
// metric's unit (`+20ms`, `-100 tok/s`, `+1 points`).
//
// The sign is the bad direction and must be written: `+` for a metric where
// lower is better (a latency may grow by this much), `-` where higher is
// better (a throughput may drop by this much). Writing the sign makes a
// config read the way the gate thinks.
type Tolerance struct {
	// Relative is true for a percentage of the baseline median.
	Relative bool
	// Value is the magnitude, never negative: a fraction (0.1 for 10%) when
	// Relative, otherwise in the metric's unit (ms, tok/s, req/s, or a
	// fraction for points: 1 point is 0.01).
	Value float64
	// Text is the tolerance as written, for reports.
	Text string
}

// String is the tolerance as written.
func (t Tolerance) String() string { return t.Text }

// MarshalJSON writes the tolerance as written.
func (t Tolerance) MarshalJSON() ([]byte, error) { return json.Marshal(t.Text) }

// ParseTolerance reads a tolerance for metric m. Accepted forms: `+10%`,
// `-5%`, `0%`; for latencies a Go duration (`+20ms`, `+1.5s`); for token
// rates `-100 tok/s`; for request rates `-0.5 req/s`; for fractions (the
// error rate, KV-cache use) percentage points only, `+1 points`, `+1 point`,
// `+0.5 pts` or `+1 pt`, never a percentage (see Points); for counts a
// number (`+4`); for GPU memory `+512 MiB` or `+2 GiB`; for power `+20 W`;
// for energy `+0.05 J/tok`; for efficiency `-1 tok/J`; for cost
// `+0.05 $/Mtok`.
func ParseTolerance(m Info, text string) (Tolerance, error) {
	s := strings.TrimSpace(text)
	t := Tolerance{Text: s}
	if s == "" {
		return t, fmt.Errorf("empty tolerance (want e.g. %s)", example(m))
	}
	sign := s[0]
	if sign == '+' || sign == '-' {
		s = strings.TrimSpace(s[1:])
	} else {
		sign = 0
	}
	var (
		v   float64
		err error
	)
	switch {
	case strings.HasSuffix(s, "%") && m.Quality:
		return t, fmt.Errorf("tolerance %q: a quality gate takes points, not a percentage (e.g. %s)", text, example(m))
	case strings.HasSuffix(s, "%") && m.Points():
		return t, fmt.Errorf("tolerance %q: %s is a share, so its tolerance is in percentage points, not a percentage of the baseline "+
			"(which may be 0): write e.g. %s (from 2.00%% to 3.00%% is 1 point)", text, m.Name, example(m))
	case strings.HasSuffix(s, "%"):
		t.Relative = true
		v, err = number(strings.TrimSuffix(s, "%"))
		v /= 100
	case m.Kind == Latency:
		var d time.Duration
		d, err = time.ParseDuration(s)
		if err != nil {
			return t, fmt.Errorf("tolerance %q: want a percentage or a duration, e.g. %s", text, example(m))
		}
		v = float64(d) / float64(time.Millisecond)
	case m.Kind == TokenRate:
		v, err = withUnit(s, "tok/s")
	case m.Kind == RequestRate:
		v, err = withUnit(s, "req/s")
	case m.Kind == Fraction:
		for _, unit := range []string{"points", "point", "pts", "pt"} {
			if v, err = withUnit(s, unit); err == nil {
				break
			}
		}
		v /= 100
	case m.Kind == Count:
		v, err = number(s)
	case m.Kind == Memory:
		if v, err = withUnit(s, "GiB"); err == nil {
			v *= 1024
		} else {
			v, err = withUnit(s, "MiB")
		}
	case m.Kind == Power:
		v, err = withUnit(s, "W")
	case m.Kind == Energy:
		v, err = withUnit(s, "J/tok")
	case m.Kind == Efficiency:
		v, err = withUnit(s, "tok/J")
	case m.Kind == Money:
		v, err = withUnit(s, "$/Mtok")
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return t, fmt.Errorf("tolerance %q: want e.g. %s", text, example(m))
	}
	if v < 0 {
		return t, fmt.Errorf("tolerance %q: write the sign in front (%s)", text, example(m))
	}
	t.Value = v
	if v == 0 {
		return t, nil // no tolerance: any significant worsening is a regression
	}
	bad := byte('+')
	if m.HigherIsBetter {
		bad = '-'
	}
	switch sign {
	case 0:
		return t, fmt.Errorf("tolerance %q: say the direction: %c%s (%s is %s-is-better, so the tolerance is how far it may %s)",
			text, bad, strings.TrimSpace(text), m.Name, m.Better(), worsen(m))
	case bad:
		return t, nil
	default:
		return t, fmt.Errorf("tolerance %q: %s is %s-is-better, so its tolerance is how far it may %s: %c%s",
			text, m.Name, m.Better(), worsen(m), bad, s)
	}
}

func worsen(m Info) string {
	if m.HigherIsBetter {
		return "drop"
	}
	return "grow"
}

// example is a tolerance that would parse for m.
func example(m Info) string {
	switch m.Kind {
	case Latency:
		return "+10% or +20ms"
	case TokenRate:
		return "-5% or -100 tok/s"
	case RequestRate:
		return "-5% or -0.5 req/s"
	case Count:
		return "+10% or +4"
	case Memory:
		return "+5% or +512 MiB or +2 GiB"
	case Power:
		return "+10% or +20 W"
	case Energy:
		return "+10% or +0.05 J/tok"
	case Efficiency:
		return "-10% or -1 tok/J"
	case Money:
		return "+10% or +0.05 $/Mtok"
	}
	if m.Quality {
		return "-2 points"
	}
	if m.HigherIsBetter {
		return "-1 points"
	}
	return "+1 points"
}

func number(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

func withUnit(s, unit string) (float64, error) {
	n, ok := strings.CutSuffix(s, unit)
	if !ok {
		return 0, fmt.Errorf("no unit %s", unit)
	}
	return number(n)
}
