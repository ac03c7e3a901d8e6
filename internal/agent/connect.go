package agent

import (
	"context"
	"os"
	"strings"
)

// Hub is how a reporter reaches the hub: its URL, the name the cluster or host is
// registered under, and its token (from TokenFile, read before every report, else Token).
type Hub struct {
	URL, Cluster     string
	TokenFile, Token string
}

// Poster returns the poster of the reports to h.
func (h Hub) Poster() (*HTTPPoster, error) {
	token := TokenSource(func() (string, error) { return h.Token, nil })
	if path := h.TokenFile; path != "" {
		token = func() (string, error) {
			b, err := os.ReadFile(path)
			return strings.TrimSpace(string(b)), err
		}
	}
	return NewHTTPPoster(h.URL, token, nil)
}

// Sending runs a Sender of p until the returned stop is called, which waits for it.
func Sending(ctx context.Context, p Poster, opts SenderOptions) (*Sender, func()) {
	sender := NewSender(p, opts)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sender.Run(ctx)
	}()
	return sender, func() { cancel(); <-done }
}
