package config

import (
	"net/url"
	"strings"
)

// SameOrigin reports whether a and b are URLs of one origin: scheme, host
// and port alike (a missing port is the scheme's). target.headers go only
// to the target's origin: its engine page (telemetry), and not to another
// server a flag names (--target over a perfgate.yaml read by default).
func SameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil || ua.Host == "" || ub.Host == "" {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}
