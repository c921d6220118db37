package localengine

import (
	"testing"

	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
)

// A CPU offline at the end of the idle check has zero percentages (as
// mpstat prints it): averaged in, two idle CPUs and one offline read as
// a machine 67% idle, busy.
func TestBusyNoteLeavesOfflineCPUsOut(t *testing.T) {
	idle := results.CPUPercent{Idle: 99, System: 1}
	w := metrics.Window{Cores: []results.CoreStat{{CPU: 0, CPUPercent: idle}, {CPU: 1, CPUPercent: idle}, {CPU: 2, Offline: true}}, Offline: []int{2}}
	if note := busyNote(w); note != "" {
		t.Errorf("two idle CPUs and one offline: %q", note)
	}
	busy := results.CPUPercent{Idle: 10, User: 90}
	w.Cores[0].CPUPercent, w.Cores[1].CPUPercent = busy, busy
	if note := busyNote(w); note == "" {
		t.Error("two busy CPUs: no note")
	}
}
