package ui

import "testing"

// TestLocalPath: after sign-in the browser goes only to a path on this server; nothing a
// browser would read as another host (a tab or a line break it drops, a backslash it reads
// as a slash, a scheme, //host) gets through.
func TestLocalPath(t *testing.T) {
	for next, want := range map[string]string{
		"/workloads/shop?env=dev":  "/workloads/shop?env=dev",
		"/":                        "/",
		"/\t/evil.example.com":     "/",
		"/\n/evil.example.com":     "/",
		"/\\evil.example.com":      "/",
		"//evil.example.com":       "/",
		"https://evil.example.com": "/",
		"javascript:alert(1)":      "/",
		"evil.example.com":         "/",
		"/%09/evil.example.com":    "/%09/evil.example.com", // still a path: the browser does not decode it into the host
		"":                         "/",
	} {
		if got := localPath(next); got != want {
			t.Errorf("localPath(%q) = %q, want %q", next, got, want)
		}
	}
}
