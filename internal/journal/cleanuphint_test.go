package journal

import (
	"errors"
	"strings"
	"testing"
)

// TestKeptJournalNamesItsCleanup: a kept journal's error names the
// command its run set (a kube run's `cnibench cleanup --kube ...`), and
// `cnibench cleanup` otherwise. Before, it always said `cnibench
// cleanup`, which touches no cluster.
func TestKeptJournalNamesItsCleanup(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"", "run cnibench cleanup after this process exits"},
		{"cnibench cleanup --kube --context 'lab ctx'", "run cnibench cleanup --kube --context 'lab ctx' after this process exits"},
	} {
		j, err := Open(t.TempDir(), "hint", "cnb-")
		if err != nil {
			t.Fatal(err)
		}
		if err := j.RecordNetns("cnb-hint-a"); err != nil {
			t.Fatal(err)
		}
		j.SetCleanup(tc.set)
		var pe *PendingError
		if err := j.Close(); !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetCleanup(%q): Close = %v; want a PendingError saying %q", tc.set, err, tc.want)
		}
	}
}
