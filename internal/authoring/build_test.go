package authoring

import (
	"errors"
	"testing"
)

func TestSelectorText(t *testing.T) {
	got, err := SelectorText([]Requirement{
		{Key: "purpose", Operator: "=", Values: "test"},
		{Key: "region", Operator: "in", Values: "east,west"},
		{Key: "legacy", Operator: "!exists"},
		{Key: "", Operator: "=", Values: "ignored"},
		{Key: "gpu", Operator: "exists"},
		{Key: "tier", Operator: "notin", Values: "batch"},
	})
	if err != nil || got != "purpose=test,region in (east,west),!legacy,gpu,tier notin (batch)" {
		t.Fatalf("SelectorText: %q, %v", got, err)
	}
	if _, err := SelectorText([]Requirement{{Key: "a", Operator: "like", Values: "x"}}); err == nil {
		t.Fatal("an unknown operator was accepted")
	}
	if _, err := SelectorText([]Requirement{{Key: "a b", Operator: "=", Values: "x"}}); err == nil {
		t.Fatal("a key with a space was accepted")
	}
	if got, err := SelectorText(nil); err != nil || got != "" {
		t.Fatalf("no rows: %q, %v (selects everything)", got, err)
	}
}

func TestAddPolicyNamesTheBrokenSelector(t *testing.T) {
	_, err := AddPolicy("p", "dev", "", "a in (", "")
	var se *SelectorError
	if !errors.As(err, &se) || se.Of != SelectsTargets {
		t.Fatalf("error %v, want a SelectorError of the targets", err)
	}
	op, err := AddPolicy("p", "dev", "retail", "purpose=test", "region in (east)")
	if err != nil || op.Spec["deploymentTargetSelector"].(map[string]any)["workspace"] != "retail" {
		t.Fatalf("AddPolicy: %+v, %v", op, err)
	}
}
