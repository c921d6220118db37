package analysis

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The local engine notes skipped datapaths one note per reason
// (localengine's TestSkipsGroupByReason has these notes): summary.json
// carries one entry per datapath with its reason, and no other note.
func TestSkippedOfEngineNotes(t *testing.T) {
	notes := []string{
		"nodes share every CPU of the machine (no spec.nodes.*.cpus): per-core figures show the whole machine, where server and client work mix",
		"datapaths flannel, weave, kube-router skipped: tool iptables-restore is not available",
		"datapath calico-wp-ipip skipped: kernel feature ipip is not available",
	}
	got := results.SkippedOf(notes)
	want := []results.Skipped{
		{Datapath: "flannel", Reason: "tool iptables-restore is not available"},
		{Datapath: "weave", Reason: "tool iptables-restore is not available"},
		{Datapath: "kube-router", Reason: "tool iptables-restore is not available"},
		{Datapath: "calico-wp-ipip", Reason: "kernel feature ipip is not available"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if results.SkippedOf(notes[:1]) != nil {
		t.Errorf("a note that is no skip read as one: %+v", results.SkippedOf(notes[:1]))
	}

	var m Model
	m.AddRun(&study.Study{}, &results.Run{Env: results.Env{Notes: notes}})
	var b strings.Builder
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int               `json:"version"`
		Skipped []results.Skipped `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Skipped, want) {
		t.Errorf("summary.json skipped = %+v, want %+v", doc.Skipped, want)
	}
}
