package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// qdiscRecord is a journal line recording an impairment's Prev.
func qdiscRecord(t *testing.T, seq int, p impair.Prev) map[string]any {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"seq": seq, "qdisc": journal.Qdisc{Netns: p.Netns, Dev: p.Dev, Prev: b}}
}

// TestQdiscReport: each undone impairment is reported after its revert
// succeeded (before, "restored" was printed and then the revert's error),
// in words of what the revert does: an ingress impairment's ifb device
// and ingress qdisc go (before, "the kernel's default root qdisc
// restored", a root never touched).
func TestQdiscReport(t *testing.T) {
	dir := t.TempDir()
	run := tunetest.NewID()
	ns := "cnb-" + run + "-node-server"
	p := writeJournal(t, dir, run,
		qdiscRecord(t, 1, impair.Prev{Netns: ns, Dev: "eth1", Kind: "noqueue", Default: true, Parent: 0xFFFFFFFF}),
		qdiscRecord(t, 2, impair.Prev{Netns: ns, Dev: "eth0", Kind: "ifb", Default: true, Parent: 0xFFFFFFFF, IFB: "cnbifb7"}),
		qdiscRecord(t, 3, impair.Prev{Netns: ns, Dev: "eth2", Kind: "tbf", Handle: 0x10000, Parent: 0x10001, Child: &impair.Child{Kind: "bfifo", Limit: 15000}}),
	)
	r, err := journal.ReadReplay(p)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	c := &cleaner{opts: Options{JournalDir: dir}, handled: map[string]bool{}, revertQdisc: func(p impair.Prev) error {
		if p.Dev == "eth1" {
			return boom
		}
		return nil
	}}
	c.revertQdiscs(run, r)
	if len(c.errs) != 1 || !errors.Is(c.errs[0], boom) {
		t.Fatalf("errors %v, want eth1's", c.errs)
	}
	got := map[string]string{}
	for _, a := range c.rep.Actions {
		got[a.Object] = a.Detail
	}
	if d, ok := got[ns+":eth1"]; ok {
		t.Errorf("failed revert reported as done: %q", d)
	}
	if d := got[ns+":eth0"]; !strings.Contains(d, "ingress qdisc of eth0") || !strings.Contains(d, "ifb device cnbifb7") || strings.Contains(d, "root") {
		t.Errorf("ingress impairment reported as %q", d)
	}
	if d := got[ns+":eth2"]; !strings.Contains(d, "under tbf") || !strings.Contains(d, "bfifo") {
		t.Errorf("impairment under tbf reported as %q", d)
	}
	// A journal whose last line the crash cut says so truthfully: that
	// line may have been an undo mark.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"reverted":`)
	f.Close()
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: &mapFS{}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Actions {
		if a.Kind == ActSkip && a.Object == p && !strings.Contains(a.Detail, "or was already undone") {
			t.Errorf("cut last line reported as %q", a.Detail)
		}
	}
	if count(rep, ActSkip) == 0 {
		t.Errorf("cut last line not reported: %v", rep.Actions)
	}
}
