package hub

import (
	"context"
	"errors"
	"testing"
	"time"
)

// updateStore is a Store whose write transactions end at once with err, without running.
type updateStore struct {
	Store
	err error
}

func (s updateStore) Update(context.Context, func(Tx) error) error { return s.err }

// doneWatcher is an Observer that records, for every result it is told of (one per job, in
// batch order), whether the job's sender had already been answered.
type doneWatcher struct {
	jobs []*job
	next int
	late []string
}

func (w *doneWatcher) Reported(result string) {
	if j := w.jobs[w.next]; len(j.done) > 0 {
		w.late = append(w.late, j.report.Cluster+": "+result)
	}
	w.next++
}

func (w *doneWatcher) Committed(int, time.Duration, error) {}

// TestResultsAreCountedBeforeTheSenderIsAnswered: a client that reads the metrics right
// after its report was acknowledged must find the report counted (the 202 used to go out
// first, and a scrape in between missed it).
func TestResultsAreCountedBeforeTheSenderIsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{"committed", nil}, {"failed", errors.New("disk full")}} {
		t.Run(tc.name, func(t *testing.T) {
			w := &doneWatcher{}
			h := New(updateStore{err: tc.err}, Options{Observer: w, SweepEvery: -1})
			batch := []*job{
				{report: Report{Cluster: "a"}, done: make(chan error, 1)},
				{report: Report{Cluster: "b"}, done: make(chan error, 1)},
			}
			w.jobs = batch
			h.commit(t.Context(), batch)
			if len(w.late) > 0 {
				t.Errorf("results %v were counted after their sender was answered", w.late)
			}
			for _, j := range batch {
				if err := <-j.done; (err != nil) != (tc.err != nil) {
					t.Errorf("%s answered %v, want an error: %v", j.report.Cluster, err, tc.err != nil)
				}
			}
		})
	}
}
