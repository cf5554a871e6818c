package sim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Drift's bounds.
const (
	// maxDrift is the largest --drift rate: +100000% a minute, 17.7 times
	// the step time one second after the epoch. Fast enough for a test of
	// a second or two; more is a typo.
	maxDrift = 1000
	// maxDriftFactor caps the factor, as --slowdown is capped, so that an
	// old epoch cannot overflow a step's duration.
	maxDriftFactor = 1e6
)

// The range of --drift-epoch: 1970 to the end of 2199. A later epoch is
// most likely milliseconds given as seconds.
var (
	minEpoch = time.Unix(0, 0)
	maxEpoch = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// driftFactor is the step-time multiplier at since, the wall-clock time
// elapsed since the drift epoch: 1 + rate × minutes, 1 before the epoch (a
// drift counts from its epoch, it does not speed a step up), at most
// maxDriftFactor.
func driftFactor(rate float64, since time.Duration) float64 {
	if rate <= 0 || since <= 0 {
		return 1
	}
	return min(1+rate*since.Minutes(), maxDriftFactor)
}

// DriftFactor is the factor Drift multiplies step time by at the instant
// at: 1 without Drift. Every simulator given the same DriftEpoch returns
// the same factor for the same instant, whenever it started.
func (s *Server) DriftFactor(at time.Time) float64 {
	return s.eng.model.driftFactor(at.Sub(s.start))
}

// DriftEpoch is the instant Drift counts from: Config.DriftEpoch, or this
// simulator's Start when that is zero. Give it to the other simulators of
// a test (Config.DriftEpoch) so that they drift together.
func (s *Server) DriftEpoch() time.Time {
	if !s.cfg.DriftEpoch.IsZero() {
		return s.cfg.DriftEpoch
	}
	return s.start.Round(0) // the wall-clock reading alone, as a parsed epoch has
}

// unixSeconds is --drift-epoch's numeric form: seconds, then at most nine
// decimals (nanoseconds).
var unixSeconds = regexp.MustCompile(`^([0-9]+)(?:\.([0-9]{1,9}))?$`)

// parseEpoch reads an instant given as Unix seconds, an integer or a
// decimal with up to nine decimals ("1767225600", "1767225600.25"), or as
// RFC 3339 ("2026-01-01T00:00:00Z", fractions and offsets allowed). The
// empty string is the zero time. The form of --drift-epoch; whether the
// instant is in range is Config.Validate's to say.
func parseEpoch(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if m := unixSeconds.FindStringSubmatch(s); m != nil {
		sec, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: Unix seconds out of range", s)
		}
		var ns int64
		if m[2] != "" {
			// Digits only, at most nine: cannot fail.
			ns, _ = strconv.ParseInt(m[2]+strings.Repeat("0", 9-len(m[2])), 10, 64)
		}
		return time.Unix(sec, ns), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want Unix seconds (1767225600 or 1767225600.25) or RFC 3339 (2026-01-01T00:00:00Z)", s)
	}
	return t, nil
}

// formatEpoch writes t as parseEpoch reads it: Unix seconds with the
// decimals it needs, or RFC 3339 before 1970 (where seconds and their
// fraction would not add up); "" for the zero time.
func formatEpoch(t time.Time) string {
	switch {
	case t.IsZero():
		return ""
	case t.Before(minEpoch):
		return t.UTC().Format(time.RFC3339Nano)
	case t.Nanosecond() == 0:
		return strconv.FormatInt(t.Unix(), 10)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()), "0")
}

// epochValue is --drift-epoch as a pflag.Value.
type epochValue time.Time

func (v *epochValue) String() string { return formatEpoch(time.Time(*v)) }

func (v *epochValue) Set(s string) error {
	t, err := parseEpoch(s)
	if err != nil {
		return err
	}
	*v = epochValue(t)
	return nil
}

func (v *epochValue) Type() string { return "epoch" }
