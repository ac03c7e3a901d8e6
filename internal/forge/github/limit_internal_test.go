package github

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLimitBody(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", len(r.URL.Path)-1))
	}))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: limitBody{limit: 8}}
	for _, tt := range []struct {
		path    string // the body is len(path)-1 bytes
		wantErr bool
	}{
		{"/1234567", false},  // 7 bytes
		{"/12345678", false}, // 8 bytes: exactly the limit
		{"/123456789", true}, // 9 bytes
		{"/1234567890123456789", true},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "larger than 8 bytes") {
				t.Errorf("GET %s: read %d bytes, error %v; want the size error", tt.path, len(body), err)
			}
		} else if err != nil || len(body) != len(tt.path)-1 {
			t.Errorf("GET %s: read %d bytes, error %v; want %d bytes", tt.path, len(body), err, len(tt.path)-1)
		}
	}
}
