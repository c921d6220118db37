package study

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Inputs a reviewer showed passing validation: each is refused with the
// file, the field and what is wrong (parseBounds applies --set values).
func TestRefusedInputs(t *testing.T) {
	list := func(n int, f func(i int) string) string {
		var b []string
		for i := 0; i < n; i++ {
			b = append(b, f(i))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	imps := func(n int) string {
		return list(n, func(i int) string { return fmt.Sprintf("{name: i%d, delay: %dms}", i, i+1) })
	}
	feats := func(n int) string {
		return "{" + strings.Trim(list(n, func(i int) string { return fmt.Sprintf("f%d: off", i) }), "[]") + "}"
	}
	long := strings.Repeat("a", MaxNameLen+1)
	for _, tc := range []struct {
		name  string
		set   []string
		field string
		want  string
	}{
		// Unknown keys inside a tuning definition (--set has no line).
		{"tuning typo pod", []string{"tunings=[baseline, {name: r, rps: {cpus: all}, pod: true}]"}, "spec.tunings[1].pod", `unknown tuning field "pod"`},
		{"tuning typo rsf", []string{"tunings=[baseline, {name: r, rps: {cpus: all}, rsf: {flowCnt: 1}}]"}, "spec.tunings[1].rsf", `unknown tuning field "rsf"`},
		{"rps typo", []string{"tunings=[baseline, {name: r, rps: {cpu: all}}]"}, "spec.tunings[1].rps.cpu", `unknown rps field "cpu"`},
		{"rfs typo", []string{"tunings=[baseline, {name: r, rps: {cpus: all}, rfs: {sockFlowEntries: 1, flowcnt: 1}}]"}, "spec.tunings[1].rfs.flowcnt", `unknown rfs field "flowcnt"`},
		// Sysctls: network ones by name, values the kernel can take, not
		// another field's.
		{"sysctl path", []string{"tunings=[baseline, {name: s, sysctls: {net.core/../x: 1}}]"}, "spec.tunings[1].sysctls.net.core/../x", "is not a network sysctl"},
		{"sysctl not net", []string{"tunings=[baseline, {name: s, sysctls: {vm.swappiness: 1}}]"}, "spec.tunings[1].sysctls.vm.swappiness", "is not a network sysctl"},
		// A device's own: the node lacks the host's eth0, so it read as
		// global and was written on the host's uplink.
		{"sysctl device", []string{"tunings=[baseline, {name: s, sysctls: {net.ipv4.conf.eth0.rp_filter: 0}}]"}, "spec.tunings[1].sysctls.net.ipv4.conf.eth0.rp_filter", "device eth0's own setting; a run's devices are its own, and the host's are not a tuning's to change: set net.ipv4.conf.all.rp_filter"},
		{"sysctl device ipv6 neigh", []string{"tunings=[baseline, {name: s, sysctls: {net.ipv6.neigh.eth1.base_reachable_time_ms: 1}}]"}, "spec.tunings[1].sysctls.net.ipv6.neigh.eth1.base_reachable_time_ms", "device eth1's own setting; a run's devices are its own, and the host's are not a tuning's to change: set net.ipv6.neigh.default.base_reachable_time_ms to"},
		{"sysctl device ax25", []string{"tunings=[baseline, {name: s, sysctls: {net.ax25.ax0.ip_default_mode: 1}}]"}, "spec.tunings[1].sysctls.net.ax25.ax0.ip_default_mode", "device ax0's own setting"},
		{"sysctl device decnet", []string{"tunings=[baseline, {name: s, sysctls: {net.decnet.conf.eth0.forwarding: 1}}]"}, "spec.tunings[1].sysctls.net.decnet.conf.eth0.forwarding", "device eth0's own setting"},
		{"sysctl bpf jit", []string{"tunings=[baseline, {name: s, sysctls: {net.core.bpf_jit_harden: 0}}]"}, "spec.tunings[1].sysctls.net.core.bpf_jit_harden", "security setting of the host"},
		{"sysctl newline", []string{`tunings=[baseline, {name: s, sysctls: {net.core.busy_read: "1\n2"}}]`}, "spec.tunings[1].sysctls.net.core.busy_read", "control character"},
		// YAML's booleans reach the kernel as words it refuses (EINVAL),
		// at the first trial: refused here, with the number to write.
		{"sysctl false", []string{"tunings=[baseline, {name: s, sysctls: {net.ipv4.tcp_timestamps: false}}]"}, "spec.tunings[1].sysctls.net.ipv4.tcp_timestamps", `"false" is a YAML boolean, a word to the kernel, which wants a number (the first trial's write would fail, EINVAL): write 0`},
		{"sysctl Off", []string{"tunings=[baseline, {name: s, sysctls: {net.core.busy_poll: Off}}]"}, "spec.tunings[1].sysctls.net.core.busy_poll", `"Off" is a YAML boolean`},
		{"sysctl YES quoted", []string{`tunings=[baseline, {name: s, sysctls: {net.ipv4.tcp_sack: "YES"}}]`}, "spec.tunings[1].sysctls.net.ipv4.tcp_sack", "write 1"},
		{"sysctl empty", []string{`tunings=[baseline, {name: s, sysctls: {net.core.busy_read: ""}}]`}, "spec.tunings[1].sysctls.net.core.busy_read", "empty"},
		{"sysctl owned", []string{"tunings=[baseline, {name: s, sysctls: {net.core.rps_sock_flow_entries: 4096}}]"}, "spec.tunings[1].sysctls.net.core.rps_sock_flow_entries", "set by rfs.sockFlowEntries"},
		{"sysctls too many", []string{"tunings=[baseline, {name: s, sysctls: {" + strings.Trim(list(MaxSysctls+1, func(i int) string { return fmt.Sprintf("net.x.y%d: 1", i) }), "[]") + "}}]"}, "spec.tunings[1].sysctls", "33 sysctls; at most 32"},
		{"side unknown", []string{"tunings=[baseline, {name: s, side: sender, sysctls: {net.ipv4.tcp_congestion_control: bbr}}]"}, "spec.tunings[1].side", `want "server" (the receiving end, as the paper tuned), "client" or "both", got "sender"`},
		{"side alone", []string{"tunings=[baseline, {name: s, side: client}]"}, "spec.tunings[1].side", "changes nothing"},
		{"sysctls pods only", []string{"tunings=[baseline, {name: s, pods: true}]"}, "spec.tunings[1].pods", "without rps, rfs or sysctls"},
		// cpuIdle: a bound in whole microseconds; pods have no CPUs of
		// their own.
		{"cpuIdle typo", []string{"tunings=[baseline, {name: i, cpuIdle: {maxLatency: 0s}}]"}, "spec.tunings[1].cpuIdle.maxLatency", `unknown cpuIdle field "maxLatency"`},
		{"cpuIdle negative", []string{"tunings=[baseline, {name: i, cpuIdle: {maxExitLatency: -1us}}]"}, "spec.tunings[1].cpuIdle.maxExitLatency", "whole microseconds"},
		{"cpuIdle huge", []string{"tunings=[baseline, {name: i, cpuIdle: {maxExitLatency: 1s}}]"}, "spec.tunings[1].cpuIdle.maxExitLatency", "to 100ms, got 1s"},
		{"cpuIdle sub-µs", []string{"tunings=[baseline, {name: i, cpuIdle: {maxExitLatency: 1500ns}}]"}, "spec.tunings[1].cpuIdle.maxExitLatency", "got 1.5µs"},
		{"devices alone", []string{"tunings=[baseline, {name: i, devices: underlay, cpuIdle: {maxExitLatency: 0s}}]"}, "spec.tunings[1].devices", "without them it changes nothing"},
		{"cpuIdle pods", []string{"tunings=[baseline, {name: i, pods: true, cpuIdle: {maxExitLatency: 0s}}]"}, "spec.tunings[1].pods", "no CPUs of its own"},
		// Impairments are bounded like the other axes.
		{"impairments too many", []string{"impairments=" + imps(MaxListLen+1)}, "spec.impairments", "65 entries; at most 64"},
		{"impairment name long", []string{"impairments=[{name: " + long + ", delay: 1ms}]"}, "spec.impairments[0].name", "at most 64"},
		{"impairments multiply cells", []string{"replicas=" + list(50, func(i int) string { return fmt.Sprint(i + 1) }),
			"workloads=[{name: u, tool: iperf3, protocol: udp, rates: " + list(64, func(i int) string { return fmt.Sprintf("%dM", i+1) }) + "}]",
			"impairments=" + imps(60)}, "spec", "x impairments); at most 10000"},
		{"impairments multiply planned time", []string{"duration=24h", "trials=2", "impairments=" + imps(3)}, "spec.trials", "at most 720h"},
		// Sweeps and offloads.
		{"msses duplicate", []string{"workloads=[{name: t, tool: iperf3, msses: [1000, 1000]}]"}, "spec.workloads[0].msses[1]", "1000 listed twice"},
		{"msses too many", []string{"workloads=[{name: t, tool: iperf3, msses: " + list(MaxListLen+1, func(i int) string { return fmt.Sprint(100 + i) }) + "}]"},
			"spec.workloads[0].msses", "65 entries; at most 64"},
		{"podOffloads too many", []string{"datapaths=[{name: f, type: flannel-vxlan, podOffloads: " + feats(MaxListLen+1) + "}]"},
			"spec.datapaths[0].podOffloads", "65 entries; at most 64"},
		{"podOffload name long", []string{"datapaths=[{name: f, type: flannel-vxlan, podOffloads: {" + strings.Repeat("x", 32) + ": off}}]"},
			"spec.datapaths[0].podOffloads", "at most 31"},
		// Loss-ceiling probe and budget.
		{"probe huge", []string{"workloads=[{name: u, tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {probe: 2562047h}}]"},
			"spec.workloads[0].ceilingSearch.probe", "to 1h"},
		{"pktgen reverse to a Service", []string{"workloads=[{name: u, tool: iperf3, protocol: udp, reverse: true, target: hairpin, lossCeiling: 3%, ceilingSearch: {sender: pktgen}}]"},
			"spec.workloads[0].ceilingSearch.sender", "use target pod, or the iperf3 sender"},
		{"probes in planned time", []string{"trials=1000", "workloads=[{name: u, tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {probe: 1h}}]"},
			"spec.trials", "loss-ceiling probes"},
		{"budget huge", []string{"trials={min: 2, max: 3}", "budget=2562047h"}, "spec.budget", "between 0 (none) and 720h"},
		// Non-finite floats.
		{"noise NaN", []string{"noise={maxStealPct: .nan, maxOutsidePct: 10, repeats: 1}"}, "spec.noise.maxStealPct", "(0, 100]"},
		{"noise Inf", []string{"noise={maxStealPct: 5, maxOutsidePct: .inf, repeats: 1}"}, "spec.noise.maxOutsidePct", "(0, 100]"},
		{"noise round trips NaN", []string{"noise={maxStealPct: 5, maxOutsidePct: 10, maxOutsidePctRoundTrips: .nan, repeats: 1}"}, "spec.noise.maxOutsidePctRoundTrips", "(0, 100]"},
		{"noise window NaN", []string{"noise={maxStealPct: 5, maxOutsidePct: 10, minWindowPct: .nan, repeats: 1}"}, "spec.noise.minWindowPct", "(0, 100]"},
		{"verdict NaN", []string{"verdict={udp: {maxLossPct: .nan}}"}, "spec.verdict.udp.maxLossPct", "outside 0..100"},
		{"verdict -Inf", []string{"verdict={tcp: {minGoodputOfUnimpaired: -.inf}}"}, "spec.verdict.tcp.minGoodputOfUnimpaired", "outside 0..1"},
		// The precision metric is one the workloads report.
		{"precision typo", []string{"trials={min: 2, max: 5}", "precision={metric: bitrat, halfWidth: 2%, of: mean}"},
			"spec.precision.metric", `"bitrat" is not a metric of this study's workloads`},
		{"precision no workload reports", []string{"trials={min: 2, max: 5}", "precision={metric: bitrate, halfWidth: 2%, of: mean}",
			"workloads=[{name: http, tool: ab}]"}, "spec.precision.metric", "their headline metrics: requests_per_s"},
		// A slip names what was meant.
		{"field typo", []string{"warmUp=1s"}, "spec.warmUp", `unknown field "warmUp" (did you mean "warmup"?)`},
		{"datapath typo", []string{"datapaths=[calico-vxaln]"}, "spec.datapaths[0]", `unknown datapath "calico-vxaln" (did you mean "calico-vxlan"? known:`},
		{"tool typo", []string{"workloads=[{name: t, tool: iperf}]"}, "spec.workloads[0].tool", `(did you mean "iperf3"? known:`},
		{"tuning swap", []string{"tunings=[baseline, rsf]"}, "spec.tunings[1]", `unknown tuning "rsf" (did you mean "rfs"? built-in:`},
		{"trials typo", []string{"trials={min: 2, mx: 3}"}, "spec.trials.mx", `unknown trials field "mx" (did you mean "max"?`},
		{"precision metric typo", []string{"trials={min: 2, max: 5}", "precision={metric: bitrat, halfWidth: 2%, of: mean}"},
			"spec.precision.metric", `(did you mean "bitrate"? their headline metrics`},
		// spec.only names the study's own entries; a selector picks something.
		{"only tuning typo", []string{"only=[{tuning: rfs-small, replicas: 1}, {tuning: rfs-smal}]"}, "spec.only[1].tuning", `the study has no tuning "rfs-smal" (did you mean "rfs-small"? it has: baseline, rfs-small)`},
		{"only replica count", []string{"only=[{tuning: rfs-small, replicas: 3}]"}, "spec.only[0].replicas", `the study has no replica count "3" (it has: 1, 2)`},
		{"only zero replicas", []string{"only=[{tuning: rfs-small, replicas: 0}]"}, "spec.only[0].replicas", `the study has no replica count "0" (it has: 1, 2)`},
		{"only workload", []string{"only=[{workload: bulk}]"}, "spec.only[0].workload", `the study has no workload "bulk" (it has: tcp, http, rr)`},
		{"only empty", []string{"only=[{}]"}, "spec.only[0]", "picks every cell"},
		{"only unknown key", []string{"only=[{tunning: rps}]"}, "spec.only[0].tunning", `"tunning"`},
		// Pods per node.
		{"intra-node pods", []string{"replicas=[126]", "workloads=[{name: i, tool: iperf3, placement: intra-node}]"},
			"spec.workloads[0]", "i needs 252 pods per node at 126 replicas"},
		// A pod start-up burst starts its pods on the server node beside
		// the measured ones (engine/local StartPods refused it at run time).
		{"burst beside replicas", []string{"replicas=[250]", "workloads=[{name: startup, tool: podstartup, concurrency: [200]}]"},
			"spec.workloads[0]", "startup starts 200 pods on the server node, which runs 250 at 250 replicas: 450 pods; a node holds at most 250"},
		{"burst of pods", []string{"replicas=[1, 100]", "workloads=[{name: startup, tool: podstartup, pods: 151, concurrency: [10]}]"},
			"spec.workloads[0]", "startup starts 151 pods on the server node, which runs 100 at 100 replicas: 251 pods"},
		{"burst beside intra-node", []string{"replicas=[60]", "workloads=[{name: startup, tool: podstartup, concurrency: [1, 140]}, {name: i, tool: iperf3, placement: intra-node}]"},
			"spec.workloads[0]", "startup@c140 starts 140 pods on the server node, which runs 120 at 60 replicas (i's): 260 pods"},
		// A warm-up the workload's tool cannot take (iperf3's -O).
		{"warmup above iperf3's omit", []string{"warmup=2m", "duration=3m"}, "spec.warmup", "2m is more than iperf3's --omit accepts (60s; workload tcp)"},
		{"warmup 61s", []string{"warmup=61s", "duration=2m"}, "spec.warmup", "1m1s is more than iperf3's --omit accepts (60s"},
		{"background pods", []string{"replicas=[200]", "workloads=[{name: bg, tool: iperf3, background: {connections: [0, 10], pairs: 51, rate: 1M}}]"},
			"spec.workloads[0]", "bg@bg10 needs 251 pods per node at 200 replicas"},
		// A cell spec.only picks still counts, at its own replica count.
		{"intra-node pods picked", []string{"replicas=[1, 126]", "workloads=[{name: i, tool: iperf3, placement: intra-node}]", "only=[{replicas: 126}]"},
			"spec.workloads[0]", "i needs 252 pods per node at 126 replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) { refusedAt(t, tc.set, tc.field, tc.want) })
	}
}

// The new checks leave room: values at their bounds are accepted.
func TestNewBoundsAccept(t *testing.T) {
	for _, set := range [][]string{
		{"impairments=[none, {name: " + strings.Repeat("a", MaxNameLen) + ", delay: 1ms}]"},
		{"workloads=[{name: t, tool: iperf3, msses: [536, 1000, 1460]}]"},
		{"workloads=[{name: u, tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {probe: 1h}}]"},
		{"workloads=[{name: u, tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {sender: pktgen}}]"},
		{"workloads=[{name: u, tool: iperf3, protocol: udp, rates: [500M, 1500M], sender: pktgen}]"},
		{"workloads=[{name: u, tool: iperf3, protocol: udp, lossCeiling: 3%, sender: pktgen, ceilingSearch: {sender: pktgen}}]"},
		{"workloads=[{name: u, tool: iperf3, protocol: udp, rate: 1G, sender: pktgen, reverse: true, target: pod}]"},
		{"trials={min: 2, max: 3}", "budget=720h"},
		{"trials={min: 2, max: 3}", "workloads=[{name: t, tool: iperf3}, {name: u, tool: iperf3, protocol: udp, rate: 1G}]",
			"precision={metric: bitrate, halfWidth: 2%, of: mean}"},
		// One workload reports it (the other's cells run to max), or a
		// collector does.
		{"trials={min: 2, max: 3}", "workloads=[{name: t, tool: iperf3}, {name: http, tool: ab}]",
			"precision={metric: bitrate, halfWidth: 2%, of: mean}"},
		{"trials={min: 2, max: 3}", "precision={metric: cpp_total_ns, halfWidth: 2%, of: mean}"},
		{"replicas=[125]", "workloads=[{name: i, tool: iperf3, placement: intra-node}]"},
		{"warmup=60s", "duration=2m"},
		{"replicas=[50]", "workloads=[{name: startup, tool: podstartup, concurrency: [200]}]"},
		{"replicas=[60]", "workloads=[{name: startup, tool: podstartup, concurrency: [1, 130]}, {name: i, tool: iperf3, placement: intra-node}]"},
		{"replicas=[249]", "workloads=[{name: startup, tool: podstartup, pods: 1}]"},
		// spec.only leaves out what would not fit, as the runner builds
		// only the pods of the cells it picks.
		{"replicas=[1, 126]", "workloads=[{name: i, tool: iperf3, placement: intra-node}]", "only=[{replicas: 1}]"},
		{"replicas=[60]", "workloads=[{name: startup, tool: podstartup, concurrency: [1, 140]}, {name: i, tool: iperf3, placement: intra-node}]",
			"only=[{workload: startup}]"},
		{"warmup=2m", "duration=3m", "workloads=[{name: rr, tool: sockperf}]"},
		// pktgen offers the load: iperf3's --omit is not used.
		{"warmup=2m", "duration=3m", "workloads=[{name: u, tool: iperf3, protocol: udp, rate: 1G, sender: pktgen}]"},
		{"replicas=[200]", "workloads=[{name: bg, tool: iperf3, background: {connections: [0, 10], pairs: 50, rate: 1M}}]"},
		{"tunings=[baseline, {name: r, rps: {cpus: all}, rfs: {sockFlowEntries: 1, flowCnt: 1}, pods: true}]"},
		{"noise={maxStealPct: 100, maxOutsidePct: 100, repeats: 0}", "verdict={udp: {maxLossPct: 100, minBitrateOfOffered: 0}}"},
	} {
		if _, err := parseBounds(t, set...); err != nil {
			t.Errorf("%v: %v", set, err)
		}
	}
}

// oneWorkload is boundsBase with its tcp workload alone.
var oneWorkload = strings.Replace(strings.Replace(boundsBase, "    - {name: http, tool: ab, size: 1M}\n", "", 1), "    - {name: rr, tool: sockperf}\n", "", 1)

// A tuning typo in the file names its line; an error in a profile names
// the profile, its line and the field; one in --set says so instead of
// a line of the file.
func TestOverrideErrorsNameOrigin(t *testing.T) {
	file := strings.Replace(boundsBase, "      rfs: {sockFlowEntries: 4096, flowCnt: 4096}\n",
		"      rfs: {sockFlowEntries: 4096, flowCnt: 4096}\n      pod: true\n", 1)
	profiles := boundsBase + "profiles:\n  fast: {duration: 2}\n  typo: {trails: 1}\n  neg: {replicas: [0]}\n"
	for _, tc := range []struct {
		name string
		data string
		opt  Options
		want string
	}{
		{"tuning typo in file", file, Options{}, `bounds.yaml:12: spec.tunings[1].pod: unknown tuning field "pod"`},
		{"profile type error", profiles, Options{Profile: "fast"}, `bounds.yaml:23: profile "fast": spec.duration: invalid duration "2"`},
		{"profile unknown field", profiles, Options{Profile: "typo"}, `bounds.yaml:24: profile "typo": spec.trails: unknown field "trails"`},
		{"profile bad value", profiles, Options{Profile: "neg"}, `bounds.yaml:25: profile "neg": spec.replicas[0]: replica count must be between 1 and 250`},
		{"set type error", boundsBase, Options{Set: []string{"duration=2"}}, `bounds.yaml (--set): spec.duration: invalid duration "2"`},
		{"set nested unknown", boundsBase, Options{Set: []string{"trials={min: 1, max: 2, x: 3}"}}, `bounds.yaml (--set): spec.trials.x: unknown trials field "x"`},
		{"set type mismatch", boundsBase, Options{Set: []string{"replicas=[a]"}}, `bounds.yaml (--set): spec.replicas[0]: want a whole number, not "a"`},
		{"set nested type mismatch", boundsBase, Options{Set: []string{"trials={min: 2, max: abc}"}}, `bounds.yaml (--set): spec.trials.max: want a whole number, not "abc"`},
		{"profile type mismatch", boundsBase + "profiles:\n  two: {replicas: [1, two]}\n", Options{Profile: "two"}, `bounds.yaml:23: profile "two": spec.replicas[1]: want a whole number, not "two"`},
		{"set lacks a field", boundsBase, Options{Set: []string{"trials={min: 3}"}}, "bounds.yaml (--set): spec.trials.max: max 0 is below min 3"},
		// A key with an index is refused as such, not located at the
		// file's entry of that index as an unknown field.
		{"set index", boundsBase, Options{Set: []string{"workloads[0].length=1K"}},
			`bounds.yaml (--set): workloads[0].length=1K: a key names a list's entry by its name (workloads.NAME.FIELD`},
		{"set nested index", boundsBase, Options{Set: []string{"tunings.rfs-small.rps[0]=x"}}, `bounds.yaml (--set): tunings.rfs-small.rps[0]=x: a key names a list's entry by its name (rps.NAME.FIELD`},
		// The profile is merged before --set runs: a --set of a
		// profile's key changed nothing, silently.
		{"set a profile", boundsBase + "profiles:\n  paper: {trials: 5}\n", Options{Set: []string{"profiles.paper.trials=3"}},
			"bounds.yaml (--set): profiles.paper.trials=3: --set changes spec after the profile is merged, so a profile's key changes nothing: use --profile NAME, then --set spec keys (trials=3)"},
		{"set the profile used", boundsBase + "profiles:\n  paper: {trials: 5}\n", Options{Profile: "paper", Set: []string{"profiles.paper={trials: 3}"}},
			"bounds.yaml (--set): profiles.paper={trials: 3}: --set changes spec after the profile is merged"},
		{"set profiles", boundsBase, Options{Set: []string{"profiles={quick: {trials: 1}}"}}, "bounds.yaml (--set): profiles={quick: {trials: 1}}: --set changes spec"},
		// An error about a whole mapping or list --set changed an entry
		// of names --set beside the file's line of it.
		{"set entry null", oneWorkload, Options{Set: []string{"workloads.tcp=null"}}, "bounds.yaml (--set): spec.workloads[0]: a list entry is empty (null)"},
		{"set inner field", strings.Replace(boundsBase, "trials: 2", "trials: {min: 2, max: 5}", 1), Options{Set: []string{"trials.min=0"}},
			"bounds.yaml:17: with --set trials.min: spec.trials: must be between 1 and 1000, got 0"},
		{"file error beside set", strings.Replace(boundsBase, "trials: 2", "trials: {min: 0, max: 5}", 1), Options{Set: []string{"trials.max=6"}},
			"bounds.yaml:17: with --set trials.max: spec.trials: must be between 1 and 1000, got 0"},
		{"profile and set", boundsBase + "profiles:\n  p: {trials: {min: 0, max: 5}}\n", Options{Profile: "p", Set: []string{"trials.max=6"}},
			`bounds.yaml:23: profile "p", with --set trials.max: spec.trials: must be between 1 and 1000, got 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bounds.yaml", []byte(tc.data), tc.opt, testCatalog)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestPodsPerNode(t *testing.T) {
	bg := &Background{Connections: []int{10}, Pairs: 2}
	for _, tc := range []struct {
		w       Workload
		r, want int
	}{
		{Workload{}, 4, 4},
		{Workload{Placement: PlacementIntraNode}, 4, 8},
		{Workload{Background: bg}, 4, 6},
		{Workload{Background: bg, Placement: PlacementIntraNode}, 4, 12},
		{Workload{Background: &Background{Connections: []int{0}, Pairs: 2}}, 4, 4},
	} {
		if got := tc.w.PodsPerNode(tc.r); got != tc.want {
			t.Errorf("%+v at %d: %d pods, want %d", tc.w, tc.r, got, tc.want)
		}
	}
}

// A slip in a file's field names its line, its path and the field meant;
// a profile that does not exist names the ones that do.
func TestSuggestions(t *testing.T) {
	doc := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n  datapaths: [calico-vxlan]\n  duration: 3s\n" +
		"  workloads:\n    - {name: tcp, tool: iperf3, lenght: 128K}\nprofiles:\n  quick: {trials: 1}\n  paper: {trials: 20}\n"
	_, err := Parse("s.yaml", []byte(doc), Options{}, testCatalog)
	if err == nil || err.Error() != `s.yaml:8: spec.workloads[0].lenght: unknown field "lenght" (did you mean "length"?)` {
		t.Errorf("field slip: %v", err)
	}
	// A field of another part of the study, or a slip of one: named with
	// the part it belongs to.
	for slip, want := range map[string]string{
		"duration: 3s":  `s.yaml:8: spec.workloads[0].duration: unknown field "duration" of a workload ("duration" is a field of spec)`,
		"durtion: 3s":   `s.yaml:8: spec.workloads[0].durtion: unknown field "durtion" of a workload (did you mean "duration", a field of spec?)`,
		"rps: {}":       `s.yaml:8: spec.workloads[0].rps: unknown field "rps" of a workload ("rps" is a field of a tuning)`,
		"zqxv: 1":       `s.yaml:8: spec.workloads[0].zqxv: unknown field "zqxv" (not part of the cnibench/v1alpha1 study format)`,
		"pin: {cpu: 1}": `s.yaml:8: spec.workloads[0].pin.cpu: unknown field "cpu" of a workload's pin ("cpu" is a field of a reference; known: server, client, fallback)`,
		"pin: {qq: 1}":  `s.yaml:8: spec.workloads[0].pin.qq: unknown field "qq" of a workload's pin (known: server, client, fallback)`,
	} {
		_, err := Parse("s.yaml", []byte(strings.Replace(doc, "lenght: 128K", slip, 1)), Options{}, testCatalog)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", slip, err, want)
		}
	}
	// The same in the parts read by their own unmarshalers; a field some
	// part has as written wins over a near one ("cpus" is a node's).
	for _, c := range []struct{ from, to, want string }{
		{"datapaths: [calico-vxlan]", "datapaths: [{name: calico-vxlan, cpus: \"0\"}]", `unknown datapath field "cpus" ("cpus" is a field of a node of spec.nodes; known: name, type`},
		{"duration: 3s", "duration: 3s\n  tunings: [{name: t, trials: 3}]", `unknown tuning field "trials" ("trials" is a field of spec; known: name, rps`},
	} {
		fixed := strings.Replace(doc, "lenght", "length", 1)
		_, err := Parse("s.yaml", []byte(strings.Replace(fixed, c.from, c.to, 1)), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %s", c.to, err, c.want)
		}
	}
	fixed := strings.Replace(doc, "lenght", "length", 1)
	_, err = Parse("s.yaml", []byte(fixed), Options{Profile: "quik"}, testCatalog)
	if err == nil || err.Error() != `s.yaml: --profile: study has no profile "quik" (did you mean "quick"? have: quick, paper)` {
		t.Errorf("profile slip: %v", err)
	}
	if _, err := Parse("s.yaml", []byte(fixed), Options{Profile: "quick"}, testCatalog); err != nil {
		t.Errorf("the study itself: %v", err)
	}
}

// A value of the wrong type names its field, also inside a flow mapping
// that holds a whole entry on one line, and says what the field takes:
// yaml.v3 gives only the line and a Go type.
func TestTypeErrorsNameField(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"replicas: [1, 2]", "replicas: [1, x]", `bounds.yaml:16: spec.replicas[1]: want a whole number, not "x"`},
		{"replicas: [1, 2]", "replicas: 4", `bounds.yaml:16: spec.replicas: want a list of whole numbers, e.g. [1, 8], not 4`},
		{"replicas: [1, 2]", "replicas: {a: 1}", `bounds.yaml:16: spec.replicas: want a list of whole numbers, e.g. [1, 8], not a mapping`},
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, parallel: [2]}", `bounds.yaml:13: spec.workloads[0].parallel: want a whole number, not a list`},
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, concurrency: manyclients}", `bounds.yaml:13: spec.workloads[0].concurrency: want a list of whole numbers, e.g. [1, 8], not "manycli..."`},
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, pin: 5}", `bounds.yaml:13: spec.workloads[0].pin: want a mapping (docs/study-format.md), not 5`},
		// Of two equal values on the line, the one whose field's type it
		// does not fit: length is a string, "x" fits it.
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, parallel: x, length: x}", `bounds.yaml:13: spec.workloads[0].parallel: want a whole number, not "x"`},
		{"replicas: [1, 2]", "{replicas: [x], only: [{tuning: x}]}", ""},
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, length: x, parallel: x, mss: x}", `bounds.yaml:13: spec.workloads[0].parallel: want a whole number, not "x"`},
	} {
		if tc.want == "" {
			continue // below, on one line
		}
		data := strings.Replace(boundsBase, tc.from, tc.to, 1)
		if data == boundsBase {
			t.Fatalf("boundsBase lacks %q", tc.from)
		}
		_, err := Parse("bounds.yaml", []byte(data), Options{}, testCatalog)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.to, err, tc.want)
		}
	}
}

// A type error on a line that holds the same value in a field it fits is
// blamed on the field it does not fit, in a profile's flow mapping and in
// a spec written on one line.
func TestTypeErrorOnSharedLine(t *testing.T) {
	_, err := Parse("bounds.yaml", []byte(boundsBase+"profiles:\n  p: {replicas: [x], only: [{tuning: x}]}\n"), Options{Profile: "p"}, testCatalog)
	if want := `bounds.yaml:23: profile "p": spec.replicas[0]: want a whole number, not "x"`; err == nil || err.Error() != want {
		t.Errorf("profile: got %v, want %q", err, want)
	}
	flow := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: f}\n" +
		"spec: {datapaths: [flannel-vxlan], workloads: [{name: tcp, tool: iperf3}], duration: 3s, trials: 1, replicas: [x], only: [{tuning: x}]}\n"
	_, err = Parse("f.yaml", []byte(flow), Options{}, testCatalog)
	if want := `f.yaml:4: spec.replicas[0]: want a whole number, not "x"`; err == nil || err.Error() != want {
		t.Errorf("flow spec: got %v, want %q", err, want)
	}
}

// Every struct type of the study format has a name an author knows, so
// that a misplaced field says where it belongs (load.go's parts).
func TestPartsNameEveryType(t *testing.T) {
	for goType := range fieldNames() {
		if goType != "Duration" && !slices.ContainsFunc(parts, func(p struct{ goType, name string }) bool { return p.goType == goType }) {
			t.Errorf("type %s has no entry in parts", goType)
		}
	}
}

// A null list entry is refused where it is, not dropped (yaml.v3 skips a
// null decoded into a list of values: `only: [~]` ran every cell).
func TestNullListEntryRefused(t *testing.T) {
	const why = "a list entry is empty (null): give a value or remove the entry"
	for _, tc := range []struct {
		from, to string
		opt      Options
		want     string
	}{
		{"", "", Options{Set: []string{"only=[~]"}}, "bounds.yaml (--set): spec.only[0]: "},
		{"", "", Options{Set: []string{"replicas=[1, null]"}}, "bounds.yaml (--set): spec.replicas[1]: "},
		{"replicas: [1, 2]", "replicas: [1, ~]", Options{}, "bounds.yaml:16: spec.replicas[1]: "},
		{"replicas: [1, 2]", "replicas:\n    - 1\n    -\n    - 2", Options{}, "bounds.yaml:18: spec.replicas[1]: "},
		{"    - baseline\n", "    - baseline\n    - ~\n", Options{}, "bounds.yaml:9: spec.tunings[1]: "},
		{"{name: tcp, tool: iperf3, length: 128K}", "{name: tcp, tool: iperf3, lengths: [1K, ~]}", Options{}, "bounds.yaml:13: spec.workloads[0].lengths[1]: "},
		{"", "profiles:\n  p: {replicas: [~]}\n", Options{Profile: "p"}, `bounds.yaml:23: profile "p": spec.replicas[0]: `},
	} {
		data := strings.Replace(boundsBase, tc.from, tc.to, 1)
		if tc.from == "" {
			data = boundsBase + tc.to
		}
		_, err := Parse("bounds.yaml", []byte(data), tc.opt, testCatalog)
		if err == nil || err.Error() != tc.want+why {
			t.Errorf("%q %+v: got %v, want %q", tc.to, tc.opt, err, tc.want+why)
		}
	}
	// A profile the run does not use is checked all the same
	// (checkProfiles): its null is refused, naming it.
	want := `bounds.yaml:23: profile "p": spec.replicas[0]: ` + why
	if _, err := Parse("bounds.yaml", []byte(boundsBase+"profiles:\n  p: {replicas: [~]}\n"), Options{}, testCatalog); err == nil || err.Error() != want {
		t.Errorf("unapplied profile: got %v, want %q", err, want)
	}
}

// A file with no document said only "EOF"; a second document was ignored,
// so a user who pasted two studies ran the first alone. A trailing "---"
// holds nothing and is no second study.
func TestDocumentCount(t *testing.T) {
	lines := strings.Count(boundsBase, "\n")
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "bounds.yaml:1: the file holds no study (it is empty or only comments)"},
		{"comments", "# nothing yet\n", "bounds.yaml:1: the file holds no study"},
		{"second", boundsBase + "---\nfoo: bar\n", fmt.Sprintf("bounds.yaml:%d: a second YAML document begins here", lines+2)},
		{"second broken", boundsBase + "---\nfoo: [\n", "bounds.yaml:"},
		{"trailing marker", boundsBase + "---\n", ""},
	} {
		_, err := Parse("bounds.yaml", []byte(tc.data), Options{}, testCatalog)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q...", tc.name, err, tc.want)
		}
	}
}

// TestQuickOnFileWithoutProfiles: a file saved from `cnibench show` has
// no profiles; --quick on it names --quick (not --profile alone, which
// the user may not have typed) and says why there is none.
func TestQuickOnFileWithoutProfiles(t *testing.T) {
	_, err := Parse("my.yaml", []byte(adaptiveBase), Options{Profile: "quick"}, testCatalog)
	want := `my.yaml: --quick (--profile quick): study has no profile "quick" (it has no profiles: a file saved from ` + "`cnibench show`" + ` keeps only the profile it was shown with)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
