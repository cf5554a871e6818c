package config

import "testing"

// The target's headers go to a metrics page on its own origin only.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"http://127.0.0.1:8080/metrics", "http://127.0.0.1:8080", true},
		{"http://LOCALHOST:8080/metrics", "http://localhost:8080/", true},
		{"https://api.example.com/metrics", "https://api.example.com:443", true},
		{"http://127.0.0.1:8080/metrics", "http://127.0.0.1:8081", false},
		{"http://127.0.0.1:8080/metrics", "https://127.0.0.1:8080", false},
		{"http://dcgm:9400/metrics", "http://127.0.0.1:8080", false},
		{"http://evil.example.com@127.0.0.1:8080/metrics", "http://127.0.0.1:8080", true},
		{"http://127.0.0.1:8080@evil.example.com/metrics", "http://127.0.0.1:8080", false},
		{"", "http://127.0.0.1:8080", false},
		{"::bad", "http://127.0.0.1:8080", false},
	} {
		if got := SameOrigin(c.a, c.b); got != c.want {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
