package tune

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/study"
)

const rmem = "/proc/sys/net/ipv4/tcp_rmem"

// partialFixture is a node whose tcp_rmem the kernel stores field by
// field, up to the first bad value.
func partialFixture() (*fakeFS, Target) {
	f, tgt := fixture()
	tgt.NodeNetns = nodeNS
	f.vals[key(nodeNS, FSProc, rmem)] = "4096\t131072\t6291456"
	f.minOne[rmem] = true
	return f, tgt
}

// TestApplyFailedMultiValueWrite: a bad value for a multi-value sysctl
// fails the write after the kernel stored the values before it ("8192
// 262144 0" leaves "8192 262144 6291456"). Apply journals what it found as
// the run's, so its own undo puts the old value back. Before, the value
// was neither old nor new to Revert, "changed by someone else", left
// alone with the entry marked done: the machine changed for good.
func TestApplyFailedMultiValueWrite(t *testing.T) {
	f, tgt := partialFixture()
	j := openJournal(t)
	tu := study.Tuning{Name: "bad", Sysctls: map[string]string{"net.ipv4.tcp_rmem": "8192 262144 0"}}
	a, err := Apply(j, f, tu, tgt)
	if a != nil || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Apply = %v, %v; want the write's EINVAL", a, err)
	}
	var ue *UndoError
	if errors.As(err, &ue) {
		t.Fatalf("undo of the half-made write failed: %v", err)
	}
	if got := f.get(nodeNS, FSProc, rmem); got != "4096 131072 6291456" && got != "4096\t131072\t6291456" {
		t.Fatalf("tcp_rmem after the failed Apply = %q, want the old 4096 131072 6291456", got)
	}
	if j.Pending() != 0 {
		t.Fatalf("journal pending %d after the undo", j.Pending())
	}
}

// TestReplayOfAHalfMadeWrite: a run killed after a write that failed
// half-way (or read back otherwise, a MismatchError) left a value that
// is neither old nor new; the journal names it as the run's, so cleanup
// restores the old value instead of calling it someone else's change.
func TestReplayOfAHalfMadeWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeFS) Change
	}{
		{"failed write", func(f *fakeFS) Change {
			return Change{Netns: nodeNS, FS: FSProc, Path: rmem, Value: "8192 262144 0"}
		}},
		{"mismatch", func(f *fakeFS) Change {
			f.minOne[rmem] = false
			f.round[rmem] = true // the kernel keeps "... 62914560"
			return Change{Netns: nodeNS, FS: FSProc, Path: rmem, Value: "4096 131072 6291456"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := partialFixture()
			f.vals[key(nodeNS, FSProc, rmem)] = "4096\t87380\t6291456"
			c := tc.setup(f)
			j := openJournal(t)
			a := &Applied{j: j, fs: f}
			if err := a.apply(c); err == nil {
				t.Fatal("apply succeeded; the test needs a half-made write")
			}
			// The process dies here: no Revert. Cleanup replays the journal.
			r, err := journal.ReadReplay(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			// A dry run says what the replay then does: before, it
			// said the older entry's value was changed since, which
			// it finds only while nothing is restored.
			left := f.get(nodeNS, FSProc, rmem)
			dry, err := RevertReplayOutcomes(r, f, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := actions(dry); got != Planned+","+Already {
				t.Errorf("dry run outcomes %v, want would-restore, then already, as the replay's", dry)
			}
			if got := f.get(nodeNS, FSProc, rmem); got != left {
				t.Fatalf("the dry run wrote tcp_rmem: %q, was %q", got, left)
			}
			outs, err := RevertReplayOutcomes(r, f, false)
			if err != nil {
				t.Fatal(err)
			}
			if actions(outs) != Restored+","+Already {
				t.Errorf("replay outcomes %v, want the kept value restored, then the planned one found back", outs)
			}
			if got := f.get(nodeNS, FSProc, rmem); !Equal(rmem, got, "4096 87380 6291456") {
				t.Fatalf("tcp_rmem after the replay = %q, want the old 4096 87380 6291456", got)
			}
		})
	}
}

// actions are the outcomes' actions, comma-separated.
func actions(outs []Outcome) string {
	var acts []string
	for _, o := range outs {
		acts = append(acts, o.Action)
	}
	return strings.Join(acts, ",")
}
