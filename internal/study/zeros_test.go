package study

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// refusal is a study's spec lines beside the defaults (withDefaults), a
// --set ("" for none), and the start of the error the study is refused
// with.
type refusal struct{ extra, set, want string }

// checkRefusals parses each refusal's study and wants it refused with
// its error.
func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		opt := Options{}
		if c.set != "" {
			opt.Set = []string{c.set}
		}
		_, err := Parse("f.yaml", []byte(withDefaults(c.extra)), opt, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q %s:\n got %v\nwant prefix %s", c.extra, c.set, err, c.want)
		}
	}
}

// An explicit 0 is refused where it is below the field's bounds, at its
// file and line; only a field left out takes the default (`messageSize:
// 0` ran qperf at 1 B).
func TestExplicitZeroRefused(t *testing.T) {
	checkRefusals(t, []refusal{
		{"  workloads: [{tool: qperf, messageSize: 0}]\n", "", "f.yaml:6: spec.workloads[0].messageSize: messageSize must be between 1 and 65000"},
		{"  workloads: [{tool: sockperf, messageSize: 0}]\n", "", "f.yaml:6: spec.workloads[0].messageSize: messageSize must be between 14 and 65000"},
		{"  workloads: [{tool: iperf3, parallel: 0}]\n", "", "f.yaml:6: spec.workloads[0].parallel: parallel must be between 1 and 128"},
		{"  workloads: [{tool: iperf3, protocol: tcp, mss: 0}]\n", "", "f.yaml:6: spec.workloads[0].mss: mss must be between 88 and"},
		{"  workloads: [{tool: ab, requests: 0}]\n", "", "f.yaml:6: spec.workloads[0].requests: "},
		{"  workloads: [{tool: podstartup, pods: 0, concurrency: [5]}]\n", "", "f.yaml:6: spec.workloads[0].pods: pods must be between 1 and 200"},
		{"  workloads: [{tool: iperf3, messageSize: 0}]\n", "", "f.yaml:6: spec.workloads[0].messageSize: tool iperf3 has no option messageSize"},
		{"  datapaths: [{type: calico-vxlan, mtu: 0}]\n", "", "f.yaml:6: spec.datapaths[0].mtu: must be between 576 and 65535, got 0 (leave mtu out, or --set it to null, for the CNI's own)"},
		{"  nodes: {underlayMTU: 0}\n", "", "f.yaml:6: spec.nodes.underlayMTU: must be between 1280 and 65535, got 0"},
		{"  datapaths: [{type: flannel-vxlan, netfilter: {cni: flannel, kubeProxy: iptables, services: 0}}]\n", "",
			"f.yaml:6: spec.datapaths[0].netfilter.services: must be between 1 and 5000 (or left out, or --set to null, for 10), got 0"},
		// A 0 in hexadecimal is refused as every number in another base
		// than ten is (radix.go), at the same field.
		{"  datapaths: [{type: flannel-vxlan, netfilter: {cni: flannel, kubeProxy: iptables, endpoints: 0x0}}]\n", "",
			"f.yaml:6: spec.datapaths[0].netfilter.endpoints: 0x0: YAML reads 0x as hexadecimal (0); write 0"},
		// Fields the list of refused paths had missed: 0 read as "any"
		// and as the default probe.
		// A reference has no --set key: left out, as Validate says.
		{"  reference: [{replicas: 0, metric: bitrate, value: 1}]\n", "", "f.yaml:6: spec.reference[0].replicas: must be between 1 and 250 (or left out for any), got 0"},
		{"  workloads: [{tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {probe: 0s}}]\n", "",
			"f.yaml:6: spec.workloads[0].ceilingSearch.probe: must be whole seconds, from 1s (iperf3 -t) to 1h, got 0 (leave it out, or --set it to null, for 2s)"},
		// A float 0 is the int field's 0 (a whole float is the number it
		// shows: fraction.go): it slipped through as left out.
		{"  datapaths: [{type: calico-vxlan, mtu: 0.0}]\n", "", "f.yaml:6: spec.datapaths[0].mtu: must be between 576 and 65535, got 0"},
		{"  reference: [{replicas: -0.0, metric: bitrate, value: 1}]\n", "", "f.yaml:6: spec.reference[0].replicas: must be between 1 and 250"},
		{"  workloads: [{tool: iperf3, parallel: 0e0}]\n", "", "f.yaml:6: spec.workloads[0].parallel: parallel must be between 1 and 128"},
		{"  workloads: [{name: tcp, tool: iperf3}]\n", "workloads.tcp.parallel=0.0", "f.yaml (--set): spec.workloads[0].parallel: parallel must be between 1 and 128"},
		{"", "datapaths=[{type: calico-vxlan, mtu: 0.0}]", "f.yaml (--set): spec.datapaths[0].mtu: must be between 576 and 65535, got 0"},
		// From --set as from the file.
		{"  workloads: [{name: rr, tool: qperf}]\n", "workloads.rr.messageSize=0", "f.yaml (--set): spec.workloads[0].messageSize: messageSize must be between 1"},
	})
	// A --set cannot leave a field out: null does, as the refusal says.
	mtu := withDefaults("  datapaths: [{name: fv, type: calico-vxlan, mtu: 1400}]\n")
	if _, err := Parse("f.yaml", []byte(mtu), Options{Set: []string{"datapaths.fv.mtu=null"}}, testCatalog); err != nil {
		t.Errorf("--set datapaths.fv.mtu=null: %v", err)
	}
	// Left out, each takes its default; 0 in a list or where 0 is in
	// bounds (noise.repeats) is not this check's.
	for _, extra := range []string{"  workloads: [{tool: qperf}]\n", "  noise: {repeats: 0, minWindowPct: 0}\n", "  cooldown: 0s\n", "  budget: 0\n"} {
		if _, err := Parse("f.yaml", []byte(withDefaults(extra)), Options{}, testCatalog); err != nil {
			t.Errorf("%q: %v", extra, err)
		}
	}
}

// Every field whose 0 a decode cannot tell from its absence (a number
// or Duration with omitempty) says what its 0 is (zeros.go), so that
// one added later is not read as "left out" when a 0 is written: the
// list of refused paths this replaced had missed reference.replicas (0
// matched every replica count) and ceilingSearch.probe (0 probed 2s).
func TestEveryDefaultedFieldSaysWhatItsZeroIs(t *testing.T) {
	used := map[string]bool{}
	walkFields(reflect.TypeFor[Study](), "", func(path string, f reflect.StructField) {
		tag, tagged := f.Tag.Lookup("zero")
		_, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		k := f.Type.Kind()
		defaulted := slices.Contains(strings.Split(opts, ","), "omitempty") &&
			(f.Type == reflect.TypeFor[Duration]() || k >= reflect.Int && k <= reflect.Float64)
		_, refused := zeroRefusals[tag]
		used[tag] = true
		switch {
		case k == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
			t.Errorf("%s: a map of structs, whose fields zeroTagged cannot name", path)
		case defaulted && !tagged:
			t.Errorf("%s: omitempty %s without a zero tag: say what an explicit 0 is (zeros.go)", path, f.Type)
		case tagged && !defaulted:
			t.Errorf("%s: a zero tag on a field whose 0 is written out", path)
		case tagged && tag != "ok" && tag != "option" && !refused:
			t.Errorf("%s: zero tag %q is neither ok, option nor a key of zeroRefusals", path, tag)
		case tag == "option" && !strings.HasPrefix(path, "spec.workloads[]."):
			t.Errorf("%s: zero:\"option\" outside a workload", path)
		}
	})
	for tag := range zeroRefusals {
		if !used[tag] {
			t.Errorf("zeroRefusals[%q] is no field's zero tag", tag)
		}
	}
}
