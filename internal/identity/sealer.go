package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxSealed bounds a sealed value: it is a cookie.
const MaxSealed = 3800

// Sealer seals values into cookies: readable by whoever holds them, but only this server
// (and its replicas, which share the key) can make one, and each expires.
type Sealer struct{ key []byte }

// NewSealer returns a Sealer with a key derived from secret (every replica given the same
// secret reads the others' cookies). An empty secret gives a random key: sessions then end
// when the process does.
func NewSealer(secret string) *Sealer {
	key := make([]byte, 32)
	if secret == "" {
		_, _ = rand.Read(key)
	} else {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte("fleetform session key"))
		key = m.Sum(nil)
	}
	return &Sealer{key: key}
}

type sealed struct {
	Purpose string          `json:"p"`
	Expires int64           `json:"e"`
	Value   json.RawMessage `json:"v"`
}

// Seal seals v for purpose until expires.
func (s *Sealer) Seal(purpose string, v any, expires time.Time) (string, error) {
	value, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(sealed{Purpose: purpose, Expires: expires.Unix(), Value: value})
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	out := payload + "." + s.mac(payload)
	if len(out) > MaxSealed {
		return "", fmt.Errorf("the sealed %s is %d bytes, more than a cookie holds (%d)", purpose, len(out), MaxSealed)
	}
	return out, nil
}

// ErrExpired means a sealed value is past its expiry.
var ErrExpired = errors.New("expired")

// Open checks a sealed value of purpose and reads it into v: ErrExpired after its expiry.
func (s *Sealer) Open(purpose, value string, now time.Time, v any) error {
	payload, mac, ok := strings.Cut(value, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.mac(payload))) {
		return errors.New("not sealed by this server")
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return err
	}
	var sl sealed
	if err := json.Unmarshal(body, &sl); err != nil {
		return err
	}
	if sl.Purpose != purpose {
		return fmt.Errorf("sealed for %s, not %s", sl.Purpose, purpose)
	}
	if now.Unix() >= sl.Expires {
		return ErrExpired
	}
	return json.Unmarshal(sl.Value, v)
}

// Derive is an HMAC of value under the key, for tokens tied to a sealed value (the CSRF
// token of a session).
func (s *Sealer) Derive(value, purpose string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Sealer) mac(payload string) string { return s.Derive(payload, "seal") }
