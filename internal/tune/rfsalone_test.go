package tune

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// RFS without RPS (a study may ask for it: get_rps_cpu steers by the flow
// table alone) writes the socket flow table and each queue's rps_flow_cnt
// and nothing to rps_cpus: a mask someone set stays, is not journaled,
// is in no record of what the tuning set, and Revert has nothing of it to
// put back.
func TestApplyRevertRFSWithoutRPS(t *testing.T) {
	f, tgt := fixture()
	mask := "class/net/eth1/queues/rx-1/rps_cpus"
	f.vals[key(nodeNS, FSSysfs, mask)] = "3"
	before := f.snapshot()
	j := openJournal(t)
	tu := study.Tuning{Name: "rfs-alone", RFS: &study.RFS{SockFlowEntries: 32768, FlowCnt: 4096}, Pods: true}

	a, err := Apply(j, f, tu, tgt)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{Change{FS: FSProc, Path: SockFlowEntriesPath, Value: "32768"}.String()}, queueWrites("", "4096", true)...)
	if !slices.Equal(f.writes, want) {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(f.writes, "\n"), strings.Join(want, "\n"))
	}
	if j.Pending() != len(want) {
		t.Errorf("journal pending %d, want %d (no rps_cpus)", j.Pending(), len(want))
	}
	if got := f.get(nodeNS, FSSysfs, mask); got != "3" {
		t.Errorf("%s = %q after apply, want the mask found, 3", mask, got)
	}
	for _, s := range a.Settings(tgt) {
		if s.Knob == "rps_cpus" {
			t.Errorf("settings record rps_cpus: %+v", s)
		}
	}

	f.writes = nil
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	if len(f.writes) != len(want) || slices.ContainsFunc(f.writes, func(w string) bool { return strings.Contains(w, "rps_cpus") }) {
		t.Errorf("revert wrote:\n%s", strings.Join(f.writes, "\n"))
	}
	if got := f.snapshot(); !maps.Equal(got, before) {
		t.Errorf("after revert:\n%v\nwant:\n%v", got, before)
	}
	if j.Pending() != 0 {
		t.Errorf("journal pending %d after revert", j.Pending())
	}
}
