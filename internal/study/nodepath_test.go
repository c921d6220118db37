package study

import (
	"strings"
	"testing"
)

// nodePathBase leaves out what a case may give; the case's text starts
// on line 6.
const nodePathBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: f
spec:
`

// withDefaults is nodePathBase, then extra, then the required fields
// extra does not give.
func withDefaults(extra string) string {
	y := nodePathBase + extra
	for _, d := range []string{"  datapaths: [flannel-vxlan]\n", "  workloads: [{tool: iperf3}]\n", "  trials: 3\n", "  duration: 3s\n"} {
		if key, _, _ := strings.Cut(d, ":"); !strings.Contains(extra, key+":") {
			y += d
		}
	}
	return y
}

// An error a custom decoder raises (Noise, Trials, Tuning, Datapath,
// Duration, Percent, ...) names its field as a type error or an
// unknown field of a plain struct does: file:line: field: message.
func TestDecoderErrorsNameTheirField(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"  noise: {maxSteal: 1}\n", `f.yaml:6: spec.noise.maxSteal: unknown noise field "maxSteal"`},
		{"  noise: 5\n", `f.yaml:6: spec.noise: noise is a mapping {`},
		{"  trials: x\n", `f.yaml:6: spec.trials: invalid trial count "x"`},
		{"  trials: [1]\n", `f.yaml:6: spec.trials: trials is a number or a mapping`},
		{"  trials: {min: 2, mx: 3}\n", `f.yaml:6: spec.trials.mx: unknown trials field "mx"`},
		{"  trials:\n    min: 2\n    mx: 3\n", `f.yaml:8: spec.trials.mx: unknown trials field "mx"`},
		{"  tunings: [baseline, {name: r, pod: true}]\n", `f.yaml:6: spec.tunings[1].pod: unknown tuning field "pod"`},
		{"  tunings:\n    - baseline\n    - rsf\n", `f.yaml:8: spec.tunings[1]: unknown tuning "rsf"`},
		{"  tunings: [{name: r, rps: 3}]\n", `f.yaml:6: spec.tunings[0].rps: rps is a mapping {cpus}`},
		{"  tunings: [{name: r, cpuIdle: {maxExitLatency: zz}}]\n", `f.yaml:6: spec.tunings[0].cpuIdle.maxExitLatency: invalid duration "zz"`},
		{"  duration: zz\n", `f.yaml:6: spec.duration: invalid duration "zz"`},
		{"  budget: zz\n", `f.yaml:6: spec.budget: invalid duration "zz"`},
		{"  workloads: [{tool: iperf3, ceilingSearch: {probe: zz}}]\n", `f.yaml:6: spec.workloads[0].ceilingSearch.probe: invalid duration "zz"`},
		{"  margin: zz\n", `f.yaml:6: spec.margin: invalid percentage "zz"`},
		{"  precision: {metric: bitrate, halfWidth: 2, of: mean}\n", `f.yaml:6: spec.precision.halfWidth: invalid percentage "2"`},
		{"  datapaths: [{name: x, mtuu: 1}]\n", `f.yaml:6: spec.datapaths[0].mtuu: unknown datapath field "mtuu"`},
		{"  datapaths:\n    - name: x\n      mtuu: 1\n", `f.yaml:8: spec.datapaths[0].mtuu: unknown datapath field "mtuu"`},
		{"  datapaths: [{type: flannel-vxlan, offloads: {gro: maybe}}]\n", `f.yaml:6: spec.datapaths[0].offloads.gro: want on or off, got "maybe"`},
		{"  datapaths: [{type: flannel-vxlan, offloads: [gro]}]\n", `f.yaml:6: spec.datapaths[0].offloads: offloads is a mapping`},
		{"  datapaths: [{type: flannel-vxlan, offloadDevices: tunnel}]\n", `f.yaml:6: spec.datapaths[0].offloadDevices: offloadDevices says`},
		{"  datapaths: [{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: nic}]\n", `f.yaml:6: spec.datapaths[0].offloadDevices: want all`},
		{"  datapaths: [{type: flannel-vxlan, netfilter: {cnii: x}}]\n", `f.yaml:6: spec.datapaths[0].netfilter.cnii: unknown netfilter field "cnii"`},
		{"  datapaths: [{type: flannel-vxlan, netfilter: 3}]\n", `f.yaml:6: spec.datapaths[0].netfilter: netfilter is a mapping`},
		// Every field of a datapath, those added late too.
		{"  datapaths: [[flannel-vxlan]]\n", `f.yaml:6: spec.datapaths[0]: a datapath is a name (calico-vxlan) or a mapping {name, type, mtu, offloads, offloadDevices, podOffloads, policy, wiring, implementation, netfilter}`},
	} {
		_, err := Parse("f.yaml", []byte(withDefaults(c.extra)), Options{}, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant prefix %s", c.extra, err, c.want)
		}
	}
}

// The same error from --set, a profile or an alias names the same field.
func TestDecoderErrorsNameTheirFieldElsewhere(t *testing.T) {
	for _, c := range []struct {
		extra string
		opt   Options
		want  string
	}{
		{"", Options{Set: []string{"noise.maxSteal=1"}}, `f.yaml (--set): spec.noise.maxSteal: unknown noise field "maxSteal"`},
		{"", Options{Set: []string{"tunings=[baseline, {name: r, pod: true}]"}}, `f.yaml (--set): spec.tunings[1].pod: unknown tuning field "pod"`},
		{"  tunings: [baseline, {name: r, rps: {cpus: all}}]\n", Options{Set: []string{"tunings.r.rps.cpu=all"}}, `f.yaml (--set): spec.tunings[1].rps.cpu: unknown rps field "cpu"`},
		// Through an alias the tree itself is decoded: the line is the
		// anchor's, where the text is written; the field the alias's.
		{"x-n: &n {maxSteal: 1}\nspec:\n  noise: *n\n", Options{}, `f.yaml:5: spec.noise.maxSteal: unknown noise field "maxSteal"`},
	} {
		y := withDefaults(c.extra)
		if strings.HasPrefix(c.extra, "x-") {
			y = strings.Replace(nodePathBase, "spec:\n", "", 1) + c.extra + strings.TrimPrefix(withDefaults(""), nodePathBase)
		}
		_, err := Parse("f.yaml", []byte(y), c.opt, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q %v:\n got %v\nwant prefix %s", c.extra, c.opt.Set, err, c.want)
		}
	}
}
