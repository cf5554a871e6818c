package httpguard

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// MaxResponseHeaderBytes bounds the response headers perfgate accepts from a
// server (net/http's default is 10 MiB). Engines send a few hundred bytes.
const MaxResponseHeaderBytes = 256 << 10

// NoRedirects is an http.Client's CheckRedirect that never follows: the
// client returns the 3xx response itself, with its body unread, for the
// caller to refuse with Redirected.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Client returns an *http.Client over tr (nil: a clone of
// http.DefaultTransport with MaxResponseHeaderBytes set) that never follows
// redirects.
func Client(tr http.RoundTripper) *http.Client {
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // what is measured or probed is the server itself, never a proxy
		t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
		tr = t
	}
	return &http.Client{Transport: tr, CheckRedirect: NoRedirects}
}

// RedirectError says a server answered with a redirect, which perfgate does
// not follow.
type RedirectError struct {
	// Method and URL are the request that was redirected.
	Method, URL string
	// Status is the 3xx status code.
	Status int
	// Location is where the redirect pointed, resolved against URL; "" when
	// the answer had no Location header. It is whole (up to MaxLocation
	// bytes), so that a secret in it can be redacted whole: Error cuts it
	// short only after Redact.
	Location string
	// Redact, when set, cleans URL and Location of secrets (the server may
	// echo a key in the Location) before Error renders and shortens them.
	Redact func(string) string
}

// MaxLocation bounds the Location a *RedirectError keeps; shownLocation is
// how much of it Error shows, after Redact.
const (
	MaxLocation   = 8 << 10
	shownLocation = 200
)

func (e *RedirectError) Error() string {
	u, loc := e.URL, e.Location
	if e.Redact != nil {
		u, loc = e.Redact(u), e.Redact(loc)
	}
	to := "with no Location"
	if loc != "" {
		to = "to " + textsafe.Cut(loc, shownLocation)
	}
	return fmt.Sprintf("%s %s answered %d, a redirect %s: perfgate never follows redirects (it would measure another server and send it target.headers); point the URL at the server itself",
		e.Method, u, e.Status, to)
}

// Redirected returns a *RedirectError when resp is a redirect (any 3xx
// status but 304 Not Modified), else nil. The caller still closes the body.
func Redirected(resp *http.Response) *RedirectError {
	if resp == nil || resp.StatusCode < 300 || resp.StatusCode > 399 || resp.StatusCode == http.StatusNotModified {
		return nil
	}
	e := &RedirectError{Status: resp.StatusCode}
	if req := resp.Request; req != nil {
		e.Method, e.URL = req.Method, req.URL.Redacted()
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		e.Location = cleanLocation(resp.Request, loc)
	}
	return e
}

// cleanLocation resolves loc against the request's URL and keeps it printable
// and bounded (MaxLocation): it is text a server chose, and ends up in logs.
// It is not cut to what a message shows here: a caller redacts a secret from
// it first (RedirectError.Redact), and a secret across the cut would leak its
// first part.
func cleanLocation(req *http.Request, loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		// Control characters, most often: say no more than that.
		return "an unreadable Location"
	}
	if req != nil && req.URL != nil {
		u = req.URL.ResolveReference(u)
	}
	loc = u.Redacted() // escapes what is not printable, hides a password
	if len(loc) > MaxLocation {
		loc = strings.ToValidUTF8(loc[:MaxLocation], "") + "..."
	}
	return loc
}
