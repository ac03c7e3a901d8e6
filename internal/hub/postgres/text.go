package postgres

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// PostgreSQL's text and jsonb cannot hold the NUL character, which JSON can carry ("\u0000")
// and SQLite stores. A report with one must not fail the transaction it is grouped in, so the
// store writes U+FFFD instead, as Go's JSON decoder does for invalid UTF-8.
const nulReplacement = "\uFFFD"

// cleanArgs replaces NUL in string arguments (copying slices it changes).
func cleanArgs(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = cleanText(v)
		case []string:
			if slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "\x00") }) {
				clean := make([]string, len(v))
				for j := range v {
					clean[j] = cleanText(v[j])
				}
				args[i] = clean
			}
		}
	}
	return args
}

func cleanText(s string) string {
	if !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ReplaceAll(s, "\x00", nulReplacement)
}

// marshalJSON is json.Marshal for a jsonb column: NUL in keys and strings becomes U+FFFD.
func marshalJSON(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil || !bytes.Contains(raw, []byte(`\u0000`)) {
		return string(raw), err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return "", err
	}
	raw, err = json.Marshal(cleanJSON(decoded))
	return string(raw), err
}

func cleanJSON(v any) any {
	switch v := v.(type) {
	case string:
		return cleanText(v)
	case []any:
		for i := range v {
			v[i] = cleanJSON(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[cleanText(k)] = cleanJSON(x)
		}
		return out
	}
	return v
}
