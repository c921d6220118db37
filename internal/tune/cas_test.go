package tune

import (
	"strings"
	"testing"
)

// TestRevertComparesBeforeSwap: a value someone else changed after the
// run wrote it is left alone (and reported), the others are restored.
func TestRevertComparesBeforeSwap(t *testing.T) {
	f, tgt := fixture()
	j := openJournal(t)
	a, err := Apply(j, f, builtin(t, "rfs+"), tgt)
	if err != nil {
		t.Fatal(err)
	}
	f.vals[key("", FSProc, SockFlowEntriesPath)] = "4096" // an operator's change
	err = a.Revert()
	if err == nil || !strings.Contains(err.Error(), "changed by someone else") {
		t.Fatalf("Revert = %v, want the foreign change reported", err)
	}
	if got := f.get("", FSProc, SockFlowEntriesPath); got != "4096" {
		t.Fatalf("foreign value overwritten: %s", got)
	}
	if got := f.get(pod0NS, FSSysfs, "class/net/eth0/queues/rx-0/rps_cpus"); got == "f" {
		t.Fatal("own value not restored")
	}
	if j.Pending() != 0 {
		t.Fatalf("journal pending %d: a left-alone value is not the run's to undo", j.Pending())
	}
}
