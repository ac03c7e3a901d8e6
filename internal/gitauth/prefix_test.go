package gitauth

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestPrefixMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix, url string
		want        bool
	}{
		{"https://github.com", "https://github.com/org/repo", true},
		{"https://github.com", "https://GitHub.COM/org/repo.git", true},
		{"https://github.com", "HTTPS://github.com:443/org/repo", true},
		{"https://github.com:443/", "https://github.com/org/repo", true},
		{"https://github.com", "https://github.com:0443/org/repo", true},
		{"https://github.com", "https://github.com.evil.com/org/repo", false},
		{"https://github.com", "https://evil.com/github.com/org/repo", false},
		{"https://github.com", "https://evilgithub.com/org/repo", false},
		{"https://github.com", "https://github.com./org/repo", false},
		{"https://github.com", "https://github.com@evil.com/org/repo", false},
		{"https://github.com", "https://user:pw@github.com/org/repo", false}, // brings its own
		{"https://github.com", "https://evil.com#@github.com/org/repo", false},
		{"https://github.com", "https://evil.com?@github.com/", false},
		{"https://github.com", "http://github.com/org/repo", false},
		{"https://github.com", "https://github.com:8443/org/repo", false},
		{"https://github.com", "ssh://git@github.com/org/repo", false},
		{"https://github.com", "git@github.com:org/repo.git", false},
		{"https://github.com", "file:///github.com/org/repo", false},
		{"https://github.com", "/srv/github.com/org/repo", false},
		{"https://github.com", "https://github.com/org/../x", true}, // whole host: any path
		{"http://git.internal:8080", "http://git.internal:8080/a", true},
		{"http://git.internal:8080", "http://git.internal/a", false},
		{"http://git.internal", "http://git.internal:80/a", true},
		{"https://git.example.com/team", "https://git.example.com/team/repo", true},
		{"https://git.example.com/team/", "https://git.example.com/team/repo.git", true},
		{"https://git.example.com/team", "https://git.example.com/team", true},
		{"https://git.example.com/team", "https://git.example.com/team/", true},
		{"https://git.example.com/team", "https://git.example.com/team.git", true},
		{"https://git.example.com/team", "https://git.example.com/teamevil/repo", false},
		{"https://git.example.com/team", "https://git.example.com/Team/repo", false}, // paths are case-sensitive
		{"https://git.example.com/team", "https://git.example.com/other/repo", false},
		{"https://git.example.com/team", "https://git.example.com/team/../other/repo", false},
		{"https://git.example.com/team", "https://git.example.com/team/%2e%2e/other/repo", false},
		{"https://git.example.com/team", "https://git.example.com/team%2F..%2Fother/repo", false},
		{"https://git.example.com/team", "https://git.example.com/team/./repo", false},
		{"https://git.example.com/team", "https://git.example.com/team//repo", false},
		{"https://git.example.com/team", `https://git.example.com/team\..\other`, false},
		{"https://git.example.com/team", "https://git.example.com/team%5c..%5cother", false},
		{"https://git.example.com/team", "https://git.example.com/", false},
		{"https://git.example.com/team/repo.git", "https://git.example.com/team/repo", true},
		{"https://[::1]:8443", "https://[0:0::1]:8443/x", true},
		{"https://127.0.0.1:8443", "https://127.0.0.1:8443/x", true},
		{"https://127.0.0.1:8443", "https://127.0.0.2:8443/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix+" "+tt.url, func(t *testing.T) {
			t.Parallel()
			p, err := parsePrefix(tt.prefix)
			if err != nil {
				t.Fatalf("parsePrefix(%q): %v", tt.prefix, err)
			}
			tg, ok := parseTarget(tt.url)
			if got := ok && p.matches(tg); got != tt.want {
				t.Errorf("%s matches %s = %v, want %v (target %+v, ok %v)", p, tt.url, got, tt.want, tg, ok)
			}
		})
	}
}

func TestParsePrefixRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"github.com":                       "want an http or https URL",
		"ssh://git@github.com":             "user information",
		"ssh://github.com":                 "want an http or https URL",
		"https://user:tok@github.com":      "user information",
		"https://github.com/?x=1":          "without query",
		"https://github.com/#frag":         "without query",
		"https://":                         "no host",
		"https://git.example.com/a/../b":   "must not hold",
		"https://git.example.com/a//b":     "must not hold",
		"https://git.example.com/a%2fb":    "must not hold",
		"https://git.example.com:99999999": "invalid port",
		"http://[::1":                      "not a URL",
	}
	for raw, want := range tests {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			_, err := parsePrefix(raw)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("parsePrefix(%q) = %v, want an error containing %q", raw, err, want)
			}
			if err != nil && strings.Contains(err.Error(), "tok@") {
				t.Errorf("error shows the URL's secret: %v", err)
			}
		})
	}
}

// FuzzPrefixMatch checks the matcher against an independent statement of the rule: a
// match means the same scheme, host and port as url.Parse reads them, and never a URL with
// user information.
func FuzzPrefixMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"https://github.com", "https://github.com/org/repo"},
		{"https://github.com", "https://github.com.evil.com/org/repo"},
		{"https://github.com", "https://github.com@evil.com/"},
		{"https://git.example.com/team/", "https://git.example.com/team/../x"},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:8080/a/b.git"},
		{"https://[::1]/", "https://[::1]:443/x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, rawPrefix, rawURL string) {
		p, err := parsePrefix(rawPrefix)
		if err != nil {
			return
		}
		tg, ok := parseTarget(rawURL)
		if !ok || !p.matches(tg) {
			return
		}
		u, err := url.Parse(rawURL)
		if err != nil {
			t.Fatalf("matched %q, which does not parse: %v", rawURL, err)
		}
		if u.User != nil {
			t.Fatalf("matched %q, which has user information", rawURL)
		}
		pu, _ := url.Parse(strings.TrimSpace(rawPrefix))
		if !strings.EqualFold(u.Scheme, pu.Scheme) {
			t.Fatalf("%q matched %q across schemes", rawPrefix, rawURL)
		}
		if hostKey(u) != hostKey(pu) || effectivePort(u) != effectivePort(pu) {
			t.Fatalf("%q matched %q on another host or port", rawPrefix, rawURL)
		}
		if p.path != "/" && (!tg.clean || !strings.HasPrefix(tg.path, p.path)) {
			t.Fatalf("%q matched %q outside its path", rawPrefix, rawURL)
		}
		if p.path != "/" && strings.Contains(u.Path, "/../") {
			t.Fatalf("%q matched %q, whose path climbs", rawPrefix, rawURL)
		}
	})
}

// hostKey and effectivePort restate the host and port comparison for FuzzPrefixMatch.
func hostKey(u *url.URL) string {
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return a.String()
	}
	return strings.ToLower(u.Hostname())
}

func effectivePort(u *url.URL) int {
	if n, err := strconv.Atoi(u.Port()); err == nil {
		return n
	}
	if strings.EqualFold(u.Scheme, "https") {
		return 443
	}
	return 80
}
