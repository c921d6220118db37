package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

const impairStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: t}
spec:
  datapaths: [flannel-vxlan]
  tunings: [baseline]
  workloads: [{name: udp, tool: iperf3, protocol: udp, rate: 100M}]
  replicas: [1]
  trials: 1
  duration: 2s
  impairAt: {where: %WHERE%}
  impairments:
    - none
    - %IMP%
`

// Bad impairments are refused with file, line and field; good ones
// become cells of their own, none's with an empty Cell.Impairment.
func TestStudyImpairments(t *testing.T) {
	for _, c := range []struct {
		imp, where, want string
	}{
		{"delay-low", "client-tunnel", ""},
		{"{name: wan, delay: 50ms, jitter: 5ms, loss: 1%}", "underlay", ""},
		{"delay-lo", "client-tunnel", `s.yaml:14: spec.impairments[1]: unknown impairment preset "delay-lo"`},
		{"{name: x, loss: 101%}", "client-tunnel", "s.yaml:14: spec.impairments[1].loss:"},
		{"{name: x, loss: -1%}", "client-tunnel", "s.yaml:14: spec.impairments[1].loss:"},
		{"{name: x, delay: 10s, jitter: 3s}", "client-tunnel", "s.yaml:14: spec.impairments[1].jitter:"},
		{"{name: x, lose: 1%}", "client-tunnel", "s.yaml:14: spec.impairments[1].lose: unknown impairment field"},
		{"delay-low", "client-nic", `s.yaml:11: spec.impairAt.where: unknown device "client-nic"`},
		{"{name: none, loss: 1%}", "client-tunnel", "s.yaml:14: spec.impairments[1].name:"},
		// A definition may not take a preset's name: compare matches
		// impaired cells by name, and 50% loss is no loss-low (5%).
		{"{name: loss-low, loss: 50%}", "client-tunnel", `s.yaml:14: spec.impairments[1].name: "loss-low" is a built-in preset (Table II)`},
		// A sweep's 0% step is a cell of its own, which impairs nothing.
		{"{name: loss-0, loss: 0%}", "client-tunnel", ""},
	} {
		y := strings.NewReplacer("%IMP%", c.imp, "%WHERE%", c.where).Replace(impairStudy)
		s, err := study.Parse("s.yaml", []byte(y), study.Options{}, studyCatalog())
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.imp, err)
				continue
			}
			cells := s.Cells()
			if len(cells) != 2 || cells[0].Impairment != "" || cells[1].Impairment == "" {
				t.Errorf("%s: cells %+v", c.imp, cells)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s at %s: error %v, want prefix %q", c.imp, c.where, err, c.want)
		}
	}
}
