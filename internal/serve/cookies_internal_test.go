package serve

import "testing"

// TestSecureCookiesBehindAProxy: behind a TLS-terminating proxy (serve on http, people on
// https), the UI's cookies are Secure all the same.
func TestSecureCookiesBehindAProxy(t *testing.T) {
	for _, c := range []struct {
		cert, external string
		want           bool
	}{
		{"", "https://fleet.example.com", true},
		{"", "HTTPS://fleet.example.com", true},
		{"/etc/tls/cert.pem", "", true},
		{"", "http://127.0.0.1:8080", false},
		{"", "", false},
	} {
		if got := secureCookies(c.cert, c.external); got != c.want {
			t.Errorf("cert %q, external URL %q: Secure %v, want %v", c.cert, c.external, got, c.want)
		}
	}
}
