package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// qdiscNetns is a namespace that is not the run's (no cnb- prefix), so
// cleanup leaves it in place and only the journaled qdisc revert can
// remove the netem from its device: what a netem on a device outside the
// run's namespaces needs.
func qdiscNetns(run string) string { return "cnbq" + run }

// helperQdisc is a run that impairs a device: the qdisc is journaled
// (journal.Qdisc holding impair.Prev, as knob impairment writes it),
// then the netem goes in. Ready line: the namespace.
func helperQdisc(dir, run string) (string, func(), error) {
	j, err := journal.Open(dir, run, "cnb-")
	if err != nil {
		return "", nil, err
	}
	ns := qdiscNetns(run)
	undo := func() {
		netns.Delete(ns)
		j.Close()
	}
	if err := netns.Add(ns); err != nil {
		return "", undo, err
	}
	h, err := netns.Handle(ns)
	if err != nil {
		return "", undo, err
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "imp0"
	if err := h.LinkAdd(&netlink.Dummy{LinkAttrs: attrs}); err != nil {
		return "", undo, err
	}
	p, err := impair.LookupPreset("delay-loss-low")
	if err != nil {
		return "", undo, err
	}
	record := func(prev impair.Prev) error {
		b, err := json.Marshal(prev)
		if err != nil {
			return err
		}
		_, err = j.RecordQdisc(journal.Qdisc{Netns: ns, Dev: "imp0", Prev: b})
		return err
	}
	if _, err := impair.Apply(ns, "imp0", p.Spec, record); err != nil {
		return "", undo, err
	}
	return ns, undo, nil
}

// kill -9 of a run that impaired a device, then cleanup: the netem is
// gone and the device's own qdisc is back; the journal is removed.
func TestKernelQdiscCrashCleanup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root")
	}
	if err := probe.Require(probe.Netem); err != nil {
		var ue *probe.UnsupportedError
		if os.Getenv("CNIBENCH_IN_VM") != "" && errors.As(err, &ue) {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
	dir := t.TempDir()
	run := "q" + time.Now().Format("150405")
	ns := qdiscNetns(run)
	t.Cleanup(func() {
		if netns.Exists(ns) {
			netns.Delete(ns)
		}
	})
	h := startHelper(t, "qdisc", dir, run)
	if got, err := impair.ReadBack(ns, "imp0"); err != nil || got.Loss != 5 {
		t.Fatalf("netem during the run: %+v, %v", got, err)
	}
	h.crash(t)
	r, err := journal.ReadReplay(filepath.Join(dir, run+journal.Ext))
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Pending(); len(p) != 1 || p[0].Qdisc == nil {
		t.Fatalf("journal pending after the crash: %+v", p)
	}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run})
	for _, a := range rep.Actions {
		t.Log(a)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !netns.Exists(ns) {
		t.Fatal("cleanup deleted a namespace that is not the run's")
	}
	if _, err := impair.ReadBack(ns, "imp0"); err == nil {
		t.Error("netem still on imp0 after cleanup")
	}
	if prev, err := impair.Inspect(ns, "imp0"); err != nil || !prev.Default {
		t.Errorf("imp0's root qdisc after cleanup: %+v, %v; want the kernel's default", prev, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("journal dir holds %v", ents)
	}
}
