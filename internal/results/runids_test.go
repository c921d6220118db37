package results

import (
	"slices"
	"testing"
)

// Every part's run ID env.json knows: run_ids, with run_id where an
// older env.json has no run_ids (or lacks it among them).
func TestAllRunIDs(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		want []string
	}{
		{Env{}, nil},
		{Env{RunID: "a1"}, []string{"a1"}},
		{Env{RunID: "a1", RunIDs: []string{"a1", "b2"}}, []string{"a1", "b2"}},
		{Env{RunID: "b2", RunIDs: []string{"a1", "b2", "c3"}}, []string{"a1", "b2", "c3"}},
		{Env{RunID: "c3", RunIDs: []string{"a1"}}, []string{"a1", "c3"}},
	} {
		got := tc.env.AllRunIDs()
		if !slices.Equal(got, tc.want) {
			t.Errorf("run_id %q, run_ids %q: %q, want %q", tc.env.RunID, tc.env.RunIDs, got, tc.want)
		}
	}
}
