package hub

import (
	"cmp"
	"slices"
	"time"
)

// RevisionSummary folds the events of one environment, revision and kind into one line:
// how many status transitions reached each state, from when to when, and the latest
// message of a promotion or an approval.
type RevisionSummary struct {
	Environment string         `json:"environment"`
	Revision    string         `json:"revision"`
	Kind        string         `json:"kind"`
	Events      int            `json:"events"`
	First       time.Time      `json:"first"`
	Last        time.Time      `json:"last"`
	To          map[string]int `json:"to"`
	Message     string         `json:"message,omitempty"`
}

// SummariseHistory folds events into one summary per environment, revision and kind,
// the latest first.
func SummariseHistory(events []Event) []RevisionSummary {
	type key struct{ env, rev, kind string }
	byKey := map[key]*RevisionSummary{}
	for _, e := range events {
		k := key{e.Environment, e.Revision, e.Kind}
		s := byKey[k]
		if s == nil {
			s = &RevisionSummary{Environment: e.Environment, Revision: e.Revision, Kind: e.Kind, First: e.Time, Last: e.Time, To: map[string]int{}}
			byKey[k] = s
		}
		s.Events++
		if e.Time.Before(s.First) {
			s.First = e.Time
		}
		if !e.Time.Before(s.Last) {
			s.Last = e.Time
			if e.Message != "" {
				s.Message = e.Message
			}
		}
		if e.To != "" && (e.Kind == EventDeployment || e.Kind == EventCluster) {
			s.To[e.To]++
		}
	}
	out := make([]RevisionSummary, 0, len(byKey))
	for _, s := range byKey {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b RevisionSummary) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Environment, b.Environment), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Revision, b.Revision))
	})
	return out
}

// WorkloadReach is how far a workload's latest desired revision has reached in one
// environment: of the clusters that should run it, how many do (every deployment target of
// the workload on them compliant), failed, progress or are silent.
type WorkloadReach struct {
	Workload    string `json:"workload"`
	Environment string `json:"environment"`
	ShouldReach int    `json:"shouldReach"`
	Has         int    `json:"has"`
	Failed      int    `json:"failed"`
	Progressing int    `json:"progressing"`
	Unknown     int    `json:"unknown"`
}

// Reach sums targets over their cluster types. Where several targets share a cluster type
// (a workload's two targets on the same clusters), the one furthest from compliant speaks
// for the type: a cluster has the workload only when every target on it is compliant.
func Reach(targets []TargetRollout) WorkloadReach {
	byType := map[string]TargetRollout{}
	for _, t := range targets {
		if old, ok := byType[t.ClusterType]; !ok || t.Compliant < old.Compliant {
			byType[t.ClusterType] = t
		}
	}
	var out WorkloadReach
	for _, t := range byType {
		out.ShouldReach += t.Clusters
		out.Has += t.Compliant
		out.Failed += t.Failed
		out.Progressing += t.Progressing
		out.Unknown += t.Unknown
	}
	return out
}

// SummariseRollouts is every workload's reach in every rollout, by workload, then in the
// rollouts' order.
func SummariseRollouts(rollouts []Rollout) []WorkloadReach {
	out := []WorkloadReach{}
	for _, ro := range rollouts {
		byWorkload := map[string][]TargetRollout{}
		for _, t := range ro.Targets {
			byWorkload[t.Workload] = append(byWorkload[t.Workload], t)
		}
		for wl, ts := range byWorkload {
			r := Reach(ts)
			r.Workload, r.Environment = wl, ro.Environment
			out = append(out, r)
		}
	}
	rank := map[string]int{}
	for i, ro := range rollouts {
		rank[ro.Environment] = i
	}
	slices.SortFunc(out, func(a, b WorkloadReach) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(rank[a.Environment], rank[b.Environment]))
	})
	return out
}
