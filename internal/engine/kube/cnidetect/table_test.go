package cnidetect

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cnitunnels"
)

// Every tunnel device the table of CNIs' tunnel devices gives a CNI and
// a mode tells detection that CNI and mode, beside the CNI's DaemonSet
// (tunl0, the ipip module's device, tells Calico's IP-in-IP only where
// Calico is named otherwise).
func TestTableDevicesTellTheirMode(t *testing.T) {
	// The DaemonSet each CNI's manifests ship (cniDaemonSets).
	shipped := map[string]string{}
	for n, c := range cniDaemonSets {
		if shipped[c] == "" || n < shipped[c] {
			shipped[c] = n
		}
	}
	fill := strings.NewReplacer("[0-9]*", "1", "*", "x")
	for _, d := range cnitunnels.List {
		if d.CNI == "" || d.Mode == "" {
			continue
		}
		name := fill.Replace(d.Pattern)
		in := Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: shipped[d.CNI]}}, Links: []string{"eth0", name}}
		if r := Detect(in); r.Name != d.CNI || r.Mode != d.Mode {
			t.Errorf("%s: Detect = %s (evidence %q), want %s (%s)", name, r, r.Evidence, d.CNI, d.Mode)
		}
		if r := Detect(Input{Links: []string{"eth0", name}}); !d.EveryNS && (r.Name != d.CNI || r.Mode != d.Mode) {
			t.Errorf("%s alone: Detect = %s (evidence %q), want %s (%s)", name, r, r.Evidence, d.CNI, d.Mode)
		}
	}
}
