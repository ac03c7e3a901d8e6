package fleet

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/access"
)

// TokenEmailDomain is the domain of the email address a hub token authors commits with:
// <token-name>@fleetform.invalid (.invalid never resolves: RFC 2606).
const TokenEmailDomain = "fleetform.invalid"

// commitAuthor is who the commits of a change made for id are authored by: a person (or a
// CI job) by the name and email of their identity provider (the email, else the subject, as
// name; the subject@fleetform.invalid as email when there is none), a hub token by its name
// and <name>@fleetform.invalid. ok is false for an identity without any name.
func commitAuthor(id access.Identity) (sig object.Signature, ok bool) {
	person := id.Name != "" || id.Email != "" || id.Subject != ""
	switch {
	case person:
		sig.Name, sig.Email = id.Name, id.Email
		if sig.Name == "" {
			sig.Name = firstOf(id.Email, id.Subject)
		}
		if sig.Email == "" {
			sig.Email = emailLocal(firstOf(id.Subject, id.Name)) + "@" + TokenEmailDomain
		}
	case id.Token != "":
		sig.Name, sig.Email = id.Token, emailLocal(id.Token)+"@"+TokenEmailDomain
	default:
		return object.Signature{}, false
	}
	sig.Name = strings.Map(signatureRune, sig.Name)
	sig.Email = strings.Map(signatureRune, sig.Email)
	return sig, true
}

// changedBy is the Changed-By trailer of a change made for id, authored by sig: a person as
// "Name <email>" with the issuer and subject of their identity when known
// ("Pat Doe <pat@contoso.com> (https://idp.example.com sub=u1)"), a hub token by its name.
func changedBy(id access.Identity, sig object.Signature) string {
	if id.Name == "" && id.Email == "" && id.Subject == "" {
		return id.Token
	}
	s := sig.Name + " <" + sig.Email + ">"
	if id.Issuer != "" || id.Subject != "" {
		s += " (" + strings.TrimSpace(strings.Map(signatureRune, id.Issuer)+" sub="+strings.Map(signatureRune, id.Subject)) + ")"
	}
	return s
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// signatureRune drops what would break a commit's author line: angle brackets and
// control characters.
func signatureRune(r rune) rune {
	if r == '<' || r == '>' || r < ' ' || r == 0x7f {
		return -1
	}
	return r
}

// emailLocal makes s the local part of an email address: what is not a letter, digit,
// '.', '_', '+' or '-' becomes '-'.
func emailLocal(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '+', r == '-':
			return r
		}
		return '-'
	}, s)
}
