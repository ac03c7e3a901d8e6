package schedule

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxNamespaceLen is the longest valid Kubernetes namespace name (a DNS-1123 label).
const maxNamespaceLen = 63

// Namespace returns the namespace of an assignment: <env>-<clusterType>-<deploymentTarget>,
// as Kalypso names it. A name that is not a valid DNS-1123 label (too long, or with dots
// or capitals) is made valid deterministically: lowercased, other characters replaced by
// '-', cut to fit, and suffixed with 8 hex digits of the SHA-256 of the full name, so
// distinct assignments keep distinct namespaces.
func Namespace(env, clusterType, deploymentTarget string) string {
	full := env + "-" + clusterType + "-" + deploymentTarget
	if validLabel(full) { // the usual case, checked without copying the name (a million times per environment)
		return full
	}
	name := sanitize(full)
	if name == full && len(name) <= maxNamespaceLen {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	suffix := hex.EncodeToString(sum[:])[:8]
	head := name[:min(len(name), maxNamespaceLen-len(suffix)-1)]
	return strings.TrimRight(head, "-") + "-" + suffix
}

// setNamespaces sets the Namespace of as, all on cluster type ct: the one its target
// declares, else as Namespace makes it.
// Those that are valid labels as they are (the usual case) share one allocation instead of
// one each: a million-assignment schedule made a million strings.
func setNamespaces(as []Assignment, env, ct string) {
	prefix := env + "-" + ct + "-"
	prefixOK := validLabel(env + "-" + ct)
	fits := make([]bool, len(as)) // the namespace is prefix and the target's name
	size := 0
	for i := range as {
		dt := as[i].DeploymentTarget
		if fits[i] = !declared(&as[i]) && prefixOK && len(prefix)+len(dt) <= maxNamespaceLen && validLabel(dt); fits[i] {
			size += len(prefix) + len(dt)
		}
	}
	var all strings.Builder // its String is the bytes written, not a copy
	all.Grow(size)
	for i := range as {
		if fits[i] {
			all.WriteString(prefix)
			all.WriteString(as[i].DeploymentTarget)
		}
	}
	names, at := all.String(), 0
	for i := range as {
		a := &as[i]
		if declared(a) {
			a.Namespace = a.Target.Namespace
			continue
		}
		if !fits[i] {
			a.Namespace = Namespace(env, ct, a.DeploymentTarget)
			continue
		}
		n := len(prefix) + len(a.DeploymentTarget)
		a.Namespace = names[at : at+n]
		at += n
	}
}

// declared reports whether the assignment's target declares its namespace.
func declared(a *Assignment) bool { return a.Target != nil && a.Target.Namespace != "" }

// validLabel reports whether s is a DNS-1123 label as sanitize leaves it: lowercase letters,
// digits and '-', neither first nor last, at most maxNamespaceLen long.
func validLabel(s string) bool {
	if s == "" || len(s) > maxNamespaceLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}
