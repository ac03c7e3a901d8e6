package hub

import (
	"encoding/json"
	"strings"

	"github.com/fleetform/fleetform/internal/access"
)

// Actor is who made a write the history records, and the access decision's reason.
type Actor struct {
	// Issuer and Subject identify a person or job signed in with OpenID Connect.
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
	// Groups are the identity's groups when the decision was made.
	Groups []string `json:"groups,omitempty"`
	// Roles are the access policies' roles that allowed the write.
	Roles []string `json:"roles,omitempty"`
	// Token is the name of the hub token used, when one was.
	Token string `json:"token,omitempty"`
	// Admin is set for an admin token.
	Admin bool `json:"admin,omitempty"`
	// Reason is the access decision's reason (for a failed sign-in: why it failed).
	Reason string `json:"reason,omitempty"`
}

// ActorOf is the actor of a write id made, allowed (or refused) by d.
func ActorOf(id access.Identity, d access.Decision) *Actor {
	return &Actor{Issuer: id.Issuer, Subject: id.Subject, Name: id.Name, Email: id.Email, Groups: id.Groups,
		Roles: d.Roles, Token: id.Token, Admin: id.Admin, Reason: d.Reason}
}

// Key identifies the person or token behind the actor, to tell identities apart (four-eyes
// approvals): the issuer and subject, else the email, else the token's name.
func (a *Actor) Key() string {
	switch {
	case a == nil:
		return ""
	case a.Subject != "":
		return "sub:" + a.Issuer + "|" + a.Subject
	case a.Email != "":
		return "email:" + strings.ToLower(a.Email)
	case a.Token != "":
		return "token:" + a.Token
	}
	return ""
}

// String names the actor in messages: its email, name, subject or token name.
func (a *Actor) String() string {
	if a == nil {
		return ""
	}
	for _, s := range []string{a.Email, a.Name, a.Subject} {
		if s != "" {
			return s
		}
	}
	if a.Token != "" {
		return "token " + a.Token
	}
	return "anonymous"
}

// searchSep separates the values of the stores' actor search columns.
const searchSep = "\n"

// SearchTerm is how a store finds value in a search column: the lowercased value between
// separators (a substring of the column exactly when the value is one of its values).
func SearchTerm(value string) string {
	return searchSep + strings.ToLower(strings.ReplaceAll(value, searchSep, " ")) + searchSep
}

// ActorColumns are what stores keep of an event's actor: its JSON ("" for none), and the
// search columns HistoryFilter.Actor (subject, email, name, token name) and
// HistoryFilter.Group (groups and roles) are matched against with SearchTerm.
func ActorColumns(a *Actor) (doc, names, groups string, err error) {
	if a == nil {
		return "", "", "", nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", "", "", err
	}
	return string(b), searchColumn(a.Subject, a.Email, a.Name, a.Token), searchColumn(append(a.Groups[:len(a.Groups):len(a.Groups)], a.Roles...)...), nil
}

func searchColumn(values ...string) string {
	var b strings.Builder
	for _, v := range values {
		if v != "" {
			b.WriteString(SearchTerm(v)[len(searchSep):])
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return searchSep + b.String()
}

// DecodeActor reads what ActorColumns wrote in its JSON column ("" is no actor).
func DecodeActor(doc string) (*Actor, error) {
	if doc == "" {
		return nil, nil
	}
	var a Actor
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Kinds are the kinds of a HistoryFilter.Kind: one, or several separated by commas (none:
// every kind).
func Kinds(kind string) []string {
	var out []string
	for k := range strings.SplitSeq(kind, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}
