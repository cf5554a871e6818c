package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoRedirectReachesAnotherServer: a 307 to another server is handed back,
// never followed, so the other server sees nothing (and no header).
func TestNoRedirectReachesAnotherServer(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer other.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/models", http.StatusTemporaryRedirect)
	}))
	defer target.Close()

	req, _ := http.NewRequest(http.MethodGet, target.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := Client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 0 {
		t.Fatalf("the other server was reached %d times", hits.Load())
	}
	re := Redirected(resp)
	if re == nil {
		t.Fatalf("Redirected(307) = nil")
	}
	if re.Status != 307 || re.Location != other.URL+"/v1/models" || re.Method != "GET" || re.URL != target.URL+"/v1/models" {
		t.Errorf("RedirectError = %+v", re)
	}
	msg := re.Error()
	for _, want := range []string{"answered 307", "to " + other.URL, "never follows redirects"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	var as *RedirectError
	if !errors.As(error(re), &as) {
		t.Error("errors.As failed")
	}
}

func TestRedirected(t *testing.T) {
	mk := func(status int, loc string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8000/health", nil)
		h := http.Header{}
		if loc != "" {
			h.Set("Location", loc)
		}
		return &http.Response{StatusCode: status, Header: h, Request: req}
	}
	tests := []struct {
		status int
		loc    string
		want   string // Location, or "-" for no error
	}{
		{200, "", "-"},
		{304, "", "-"},
		{404, "", "-"},
		{301, "/elsewhere", "http://127.0.0.1:8000/elsewhere"},
		{302, "http://10.0.0.1:9/x", "http://10.0.0.1:9/x"},
		{308, "", ""},
		{307, "http://u:pw@evil/x?a=%0A::error::", "http://u:xxxxx@evil/x?a=%0A::error::"},
		{307, "http://evil/\x1b[31mred\n::error::x", "an unreadable Location"},
	}
	for _, tt := range tests {
		re := Redirected(mk(tt.status, tt.loc))
		if tt.want == "-" {
			if re != nil {
				t.Errorf("Redirected(%d) = %v, want nil", tt.status, re)
			}
			continue
		}
		if re == nil {
			t.Errorf("Redirected(%d) = nil", tt.status)
			continue
		}
		if re.Location != tt.want {
			t.Errorf("Redirected(%d, %q).Location = %q, want %q", tt.status, tt.loc, re.Location, tt.want)
		}
		if strings.ContainsAny(re.Error(), "\n\x1b") {
			t.Errorf("message carries control characters: %q", re.Error())
		}
	}
}

// A key in a long Location, across where a message cuts it, is redacted
// whole: Redirected keeps the Location whole and Error cuts it only after
// Redact. (The Location used to be cut to 200 bytes first, so a caller's
// redaction missed the key and its first part reached the log.)
func TestRedirectKeyAcrossTheCut(t *testing.T) {
	const key = "sk-straddling-key-0123456789"
	// Resolved, the Location is http://127.0.0.1:8000/aaa…: the key starts
	// a few bytes before Error's cut.
	loc := "/" + strings.Repeat("a", 170) + "?k=" + key
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8000/health", nil)
	resp := &http.Response{StatusCode: 302, Header: http.Header{"Location": {loc}}, Request: req}
	re := Redirected(resp)
	if re == nil {
		t.Fatal("Redirected(302) = nil")
	}
	if !strings.HasSuffix(re.Location, "?k="+key) {
		t.Errorf("Location %q lost the end of the server's Location", re.Location)
	}
	re.Redact = func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
	msg := re.Error()
	if strings.Contains(msg, "?k=sk") || !strings.Contains(msg, "?k=[re") {
		t.Errorf("the message holds part of the key, or not its redaction: %q", msg)
	}

	// Error still shows a bounded Location; Redirected keeps MaxLocation.
	long := "/" + strings.Repeat("b", 3*MaxLocation)
	re = Redirected(&http.Response{StatusCode: 302, Header: http.Header{"Location": {long}}, Request: req})
	if len(re.Location) > MaxLocation+3 {
		t.Errorf("Location kept %d bytes, want at most %d", len(re.Location), MaxLocation+3)
	}
	if n := len(re.Error()); n > 600 {
		t.Errorf("message is %d bytes: %q", n, re.Error())
	}
}
