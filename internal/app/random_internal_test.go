package app

import (
	"slices"
	"testing"
)

// TestKeepCommittedOnlyRandomParts: a committed file is kept only when it differs from the new
// render in the random part of its lines alone (a name built from a value and a random
// suffix whose value changed is written anew), and only when every file with random values
// can be kept: one that changed for real makes the whole render written, so that a checksum
// of a random secret stays the checksum of the secret written.
func TestKeepCommittedOnlyRandomParts(t *testing.T) {
	render := func(prefix, user, rnd, sum string) map[string][]byte {
		return map[string][]byte{
			"configmap-job.yaml": []byte("kind: ConfigMap\ndata:\n  name: " + prefix + "-" + rnd + "\n"),
			"secret-db.yaml":     []byte("kind: Secret\ndata:\n  user: " + user + "\n  password: " + rnd + "\n"),
			"deployment-web.yaml": []byte("kind: Deployment\nmetadata:\n  annotations:\n    checksum/secret: " + sum +
				"\n"),
			"service-web.yaml": []byte("kind: Service\n"),
		}
	}
	committed := render("blue", "alice", "q7wxe", "9f1c")
	prev := func(name string) ([]byte, bool) { b, ok := committed[name]; return b, ok }
	folder := func(prefix, user string) *Folder {
		f := &Folder{Files: render(prefix, user, "k2mzt", "41aa")}
		f.randomLines(render(prefix, user, "x8cvd", "07be"), render(prefix, user, "hn3rp", "d25f"))
		return f
	}

	f := folder("blue", "alice") // the same inputs: every random file is kept
	if kept, want := f.KeepCommitted(prev), []string{"configmap-job.yaml", "deployment-web.yaml", "secret-db.yaml"}; !slices.Equal(kept, want) {
		t.Errorf("same inputs: kept %v, want %v", kept, want)
	}
	for _, in := range []struct{ prefix, user string }{{"green", "alice"}, {"blue", "bob"}} {
		f := folder(in.prefix, in.user)
		if kept := f.KeepCommitted(prev); kept != nil {
			t.Errorf("%+v: kept %v, want the whole render written", in, kept)
		}
		if string(f.Files["configmap-job.yaml"]) != "kind: ConfigMap\ndata:\n  name: "+in.prefix+"-k2mzt\n" {
			t.Errorf("%+v: config map %q", in, f.Files["configmap-job.yaml"])
		}
	}
}

// TestKeepCommittedDespiteAgreeingEnds: the renders' random values agree on their first and
// last characters by chance (a base64 value starts with one of few letters); the committed
// value, which does not, is kept all the same: the random part is the whole word.
func TestKeepCommittedDespiteAgreeingEnds(t *testing.T) {
	secret := func(password string) []byte { return []byte("kind: Secret\ndata:\n  password: " + password + "==\n") }
	f := &Folder{Files: map[string][]byte{"secret-db.yaml": secret("TmF1k2x")}}
	f.randomLines(map[string][]byte{"secret-db.yaml": secret("Tq9Z0x")}, map[string][]byte{"secret-db.yaml": secret("TzzP4x")})
	committed := secret("Ydk3Lmc")
	if kept := f.KeepCommitted(func(string) ([]byte, bool) { return committed, true }); !slices.Equal(kept, []string{"secret-db.yaml"}) {
		t.Errorf("kept %v, want the secret", kept)
	}
}
