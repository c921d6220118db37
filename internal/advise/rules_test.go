package advise

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

func load(t testing.TB, name string) *inspect.Inspection {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var in inspect.Inspection
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if in.Version != inspect.Version || in.Source == "" {
		t.Fatalf("%s: want version %d and a source describing the fixture", name, inspect.Version)
	}
	return &in
}

const (
	C  = Candidate
	NA = NotApplicable
	U  = Unknown
)

// want is every rule's status on every fixture: when it fires and when not.
var want = map[string]map[string]string{
	"this-machine": {
		"rfs": C, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": NA, "overlay-offload": NA, "native-routing": NA,
		"netfilter-rules": NA, "conntrack-size": NA, "macvlan": NA, "numa-placement": NA, "irq-spread": NA, "busy-poll": NA, "cpu-idle": C,
	},
	"calico-vxlan-jumbo": {
		"rfs": C, "tunnel-mtu": C, "tunnel-gro": C, "nic-gro": NA, "overlay-offload": NA, "native-routing": C,
		"netfilter-rules": C, "conntrack-size": C, "macvlan": NA, "numa-placement": C, "irq-spread": NA, "busy-poll": C, "cpu-idle": C,
	},
	"ipip-nic-vxlan-offload": {
		"rfs": NA, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": NA, "overlay-offload": C, "native-routing": C,
		"netfilter-rules": NA, "conntrack-size": NA, "macvlan": NA, "numa-placement": NA, "irq-spread": NA, "busy-poll": NA, "cpu-idle": NA,
	},
	"flannel-nic-no-offload": {
		"rfs": NA, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": C, "overlay-offload": NA, "native-routing": C,
		"netfilter-rules": NA, "conntrack-size": NA, "macvlan": C, "numa-placement": NA, "irq-spread": NA, "busy-poll": C, "cpu-idle": U,
	},
	// The full-kernel VM: the ipip and ip_gre modules' fallback tunl0 and
	// gre0 are no overlay in use; without a NIC or a default route the
	// NIC rules cannot tell, nor the netfilter rule without a readable
	// ruleset.
	"full-kernel-vm": {
		"rfs": U, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": U, "overlay-offload": NA, "native-routing": NA,
		"netfilter-rules": U, "conntrack-size": NA, "macvlan": NA, "numa-placement": NA, "irq-spread": U, "busy-poll": NA, "cpu-idle": U,
	},
	// A veth underlay: RFS applies to its queue; the rules that need a
	// NIC's hardware (its GRO, IRQs, NUMA node, tunnel offload) are
	// unknown, not guessed from a veth's software features.
	"kind-node-veth-underlay": {
		"rfs": C, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": U, "overlay-offload": NA, "native-routing": NA,
		"netfilter-rules": NA, "conntrack-size": NA, "macvlan": C, "numa-placement": NA, "irq-spread": NA, "busy-poll": NA, "cpu-idle": U,
	},
	"multiqueue-rss-one-cpu": {
		"rfs": NA, "tunnel-mtu": NA, "tunnel-gro": NA, "nic-gro": NA, "overlay-offload": NA, "native-routing": NA,
		"netfilter-rules": NA, "conntrack-size": NA, "macvlan": NA, "numa-placement": NA, "irq-spread": C, "busy-poll": C, "cpu-idle": U,
	},
}

func TestEveryRuleOnEveryFixture(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	fired, silent := map[string]bool{}, map[string]bool{}
	for fixture, statuses := range want {
		in := load(t, fixture)
		for _, r := range rules {
			got := Evaluate(r, in)
			w, ok := statuses[r.Name]
			if !ok {
				t.Errorf("%s: no expected status for rule %s", fixture, r.Name)
				continue
			}
			if got.Status != w {
				t.Errorf("%s: rule %s is %s, want %s: %v", fixture, r.Name, got.Status, w, got.Why)
			}
			fired[r.Name] = fired[r.Name] || got.Status == C
			silent[r.Name] = silent[r.Name] || got.Status == NA
			if got.Status == C && (len(got.Knobs) == 0 || len(got.Permanent) == 0 || strings.Contains(got.Effect+knobText(got.Knobs), "{")) {
				t.Errorf("%s: rule %s: candidate without filled knobs or permanent form: %+v", fixture, r.Name, got)
			}
		}
	}
	for _, n := range Names() {
		if !fired[n] || !silent[n] {
			t.Errorf("rule %s: fires in some fixture %v, stays silent in some %v: want both shown", n, fired[n], silent[n])
		}
	}
}

// The parameters a candidate proposes are computed from the machine.
func TestCandidateParameters(t *testing.T) {
	cases := []struct {
		fixture, rule, want string
	}{
		{"calico-vxlan-jumbo", "tunnel-mtu", "mtu on vxlan.calico: mtu=8950, pods=8950"},
		{"calico-vxlan-jumbo", "rfs", "rfs on ens1f0: rps_cpus=0000ff00, rps_flow_cnt=8192, rps_sock_flow_entries=32768"},
		{"calico-vxlan-jumbo", "conntrack-size", "conntrack: nf_conntrack_buckets=524288, nf_conntrack_max=524288"},
		{"calico-vxlan-jumbo", "numa-placement", "placement on ens1f0: numa_node=1, placement=same-numa"},
		{"this-machine", "rfs", "rfs on eth0: rps_cpus=00000003, rps_flow_cnt=32768, rps_sock_flow_entries=32768"},
		{"ipip-nic-vxlan-offload", "overlay-offload", "overlay on tunl0: from=ipip, to=vxlan"},
		{"flannel-nic-no-offload", "macvlan", "attachment on cni0: from=veth + bridge cni0, to=macvlan (bridge mode) on enp0s31f6"},
	}
	for _, tc := range cases {
		rs, err := Lookup(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		got := Evaluate(rs[0], load(t, tc.fixture))
		if k := knobText(got.Knobs); k != tc.want {
			t.Errorf("%s %s: knobs %q, want %q", tc.fixture, tc.rule, k, tc.want)
		}
	}
	rs, _ := Lookup("rfs")
	got := Evaluate(rs[0], load(t, "calico-vxlan-jumbo"))
	if !strings.Contains(got.Permanent[0].Text, "net.core.rps_sock_flow_entries = 32768") ||
		!strings.Contains(got.Permanent[1].Text, `NAME=="ens1f0"`) || !strings.Contains(got.Permanent[1].Text, "echo 8192 > $$q/rps_flow_cnt") {
		t.Errorf("rfs permanent forms: %+v", got.Permanent)
	}
}

// A fact the inspection could not read makes a rule unknown, with the
// reason, unless another predicate already fails.
func TestUnknownFacts(t *testing.T) {
	in := load(t, "flannel-nic-no-offload")
	in.NICs[0].Offloads = nil
	in.Unknown = map[string]string{"offloads enp0s31f6": "ethtool: not found"}
	rs, _ := Lookup("nic-gro", "overlay-offload", "macvlan")
	got := EvaluateAll(rs, in)
	if got[0].Status != Unknown || !strings.Contains(strings.Join(got[0].Why, ";"), "ethtool: not found") {
		t.Errorf("nic-gro without offloads: %s %v", got[0].Status, got[0].Why)
	}
	if got[1].Status != Unknown {
		t.Errorf("overlay-offload without offloads: %s %v", got[1].Status, got[1].Why)
	}
	if got[2].Status != Candidate {
		t.Errorf("macvlan does not need offloads: %s %v", got[2].Status, got[2].Why)
	}
	// overlay_in_use fails on this machine: not applicable even though the
	// NIC's offloads are unknown.
	in = load(t, "this-machine")
	in.Unknown = map[string]string{"offloads eth0": "no command runner"}
	rs, _ = Lookup("overlay-offload")
	if got := Evaluate(rs[0], in); got.Status != NotApplicable {
		t.Errorf("overlay-offload with no tunnel and unknown offloads: %s %v", got.Status, got.Why)
	}
	// A parameter the inspection cannot fill makes the rule unknown.
	in = load(t, "calico-vxlan-jumbo")
	in.NICs[0].NUMANode = -1
	rs, _ = Lookup("numa-placement")
	if got := Evaluate(rs[0], in); got.Status != Unknown || !strings.Contains(got.Why[0], "nic_numa_node") {
		t.Errorf("numa-placement without the NIC's node: %s %v", got.Status, got.Why)
	}
	// A fact that cannot tell is named once, by the predicate, with what
	// would change it.
	in = load(t, "this-machine")
	in.CPUIdle = nil
	rs, _ = Lookup("cpu-idle")
	if got := Evaluate(rs[0], in); got.Status != Unknown || len(got.Why) != 1 ||
		!strings.HasPrefix(got.Why[0], "idle_wake_slow: no cpuidle driver:") || !strings.Contains(got.Why[0], "idle=poll") {
		t.Errorf("cpu-idle without a cpuidle driver: %s %q", got.Status, got.Why)
	}
}

func TestLookup(t *testing.T) {
	rs, err := Lookup("tunnel-mtu", "rfs", "tunnel-mtu")
	if err != nil || len(rs) != 2 || rs[0].Name != "tunnel-mtu" || rs[1].Name != "rfs" {
		t.Fatalf("Lookup = %v, %v", rs, err)
	}
	_, err = Lookup("rfs", "nope")
	if err == nil || !strings.Contains(err.Error(), `unknown rule "nope"`) || !strings.Contains(err.Error(), "known: rfs, tunnel-mtu") {
		t.Errorf("Lookup(nope) = %v", err)
	}
}

// Every file under rules/ is in ruleFiles and the other way round.
func TestRuleListMatchesFiles(t *testing.T) {
	ents, err := ruleFS.ReadDir("rules")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	list := slices.Clone(ruleFiles)
	slices.Sort(list)
	if !slices.Equal(files, list) {
		t.Errorf("rules/ holds %v, ruleFiles lists %v", files, list)
	}
}

func TestParseRuleRejects(t *testing.T) {
	base := "name: x\ntitle: t\neffect: e\nrisk: r\nevidence: [{source: s, finding: f}]\npermanent: [{kind: command, text: t}]\nnoProof: n\nknobs: [{kind: sysctl}]\n"
	cases := map[string]string{
		"when: [\"cpus >= 2\"]\nextra: 1\n":                        "field extra not found",
		"when: [\"nope >= 2\"]\n":                                  `unknown fact "nope"`,
		"when: [\"cpus ~ 2\"]\n":                                   "want \"FACT OP NUMBER\"",
		"when: [\"cpus >= two\"]\n":                                "is not a number",
		"when: [{offload_off: not-a-feature}]\n":                   "not an inspected feature",
		"when: [{exec: rm}]\n":                                     `unknown predicate "exec"`,
		"when: []\n":                                               "at least one predicate",
		"when: [cpus]\nknobs: [{kind: x}]\n":                       `kind "x"`,
		"when: [cpus]\nknobs: [{kind: mtu, device: \"{nope}\"}]\n": "unknown placeholder {nope}",
		"when: [cpus]\nprove: {duration: 5s}\n":                    "prove.duration: may set only",
		"when: [cpus]\nprove: {tunings: [\"{nope}\"]}\n":           "prove.tunings: unknown placeholder {nope}",
		"when: [cpus]\nanswers: [one-cor]\n":                       `answers: "one-cor" is not a finding (one-core, steering, netfilter, overlay, idle-wake)`,
	}
	for tail, msg := range cases {
		b := strings.Replace(base, "knobs: [{kind: sysctl}]\n", "", strings.Count(tail, "knobs:"))
		b = strings.Replace(b, "noProof: n\n", "", strings.Count(tail, "prove:"))
		_, err := ParseRule([]byte(b + tail))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", tail, err, msg)
		}
	}
	if _, err := ParseRule([]byte(base + "when: [\"cpus >= 2\", \"not overlay_in_use\", {cni: [calico]}]\n")); err != nil {
		t.Errorf("valid rule: %v", err)
	}
}

// A bool fact compared as a number (and the reverse) is unknown, not true.
func TestPredicateTypes(t *testing.T) {
	in := load(t, "this-machine")
	for _, src := range []string{"overlay_in_use >= 1", "cpus"} {
		var p Predicate
		if err := p.parseString(src); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.eval(in); err == nil {
			t.Errorf("%q: want a type error", src)
		}
	}
}

func TestReportPages(t *testing.T) {
	rules, _ := Rules()
	rep := Build(rules, load(t, "calico-vxlan-jumbo"), time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC))
	if len(rep.Candidates)+len(rep.Others) != len(rules) {
		t.Fatalf("%d candidates + %d others for %d rules", len(rep.Candidates), len(rep.Others), len(rules))
	}
	dir := t.TempDir()
	if err := rep.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, FileMarkdown))
	html, _ := os.ReadFile(filepath.Join(dir, FileHTML))
	for _, page := range []string{string(md), string(html)} {
		for _, s := range []string{"tunnel-mtu", "8950", NotProven, "seed 000", "vxlan.calico", "MTU 1450", "net.core.rps_sock_flow_entries = 32768", "not applicable"} {
			if !strings.Contains(page, s) {
				t.Errorf("page lacks %q", s)
			}
		}
	}
	if !strings.Contains(string(md), "| "+NotMeasured+" | "+NotProven+" |") {
		t.Errorf("the table's measured effect and verdict columns: %s", md)
	}
	if strings.Contains(string(html), "<script") || !strings.Contains(string(html), "&#34;spec&#34;") {
		t.Errorf("HTML must be escaped and script-free")
	}
	var back Report
	b, _ := os.ReadFile(filepath.Join(dir, FileJSON))
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Candidates) != len(rep.Candidates) || back.Candidates[0].Measured != NotMeasured || back.Candidates[0].Verdict != NotProven ||
		back.Inspection.CPUs != 16 {
		t.Errorf("advice.json round trip: %+v", back.Candidates[0])
	}
	if _, err := os.Stat(filepath.Join(dir, FileInspection)); err != nil {
		t.Error(err)
	}
}

// docs/advise.md lists every rule.
func TestDocsListEveryRule(t *testing.T) {
	b, err := os.ReadFile("../../docs/advise.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if !strings.Contains(string(b), "| `"+n+"` |") {
			t.Errorf("docs/advise.md has no row for rule %s", n)
		}
	}
	for _, f := range FactNames() {
		if !strings.Contains(string(b), "`"+f+"`") {
			t.Errorf("docs/advise.md does not list fact %s", f)
		}
	}
}

// The tunnel is the CNI's: an idle tunl0 (the ipip module's fallback
// device, present on many Calico VXLAN nodes) is not the overlay, and on
// a host without a CNI it is no overlay at all.
func TestPrimaryTunnel(t *testing.T) {
	in := load(t, "calico-vxlan-jumbo")
	in.Tunnels = append([]inspect.Device{{Name: "tunl0", Kind: "ipip", MTU: 1480}}, in.Tunnels...)
	rs, _ := Lookup("tunnel-mtu", "tunnel-gro", "overlay-offload")
	got := EvaluateAll(rs, in)
	if got[0].Status != Candidate || knobText(got[0].Knobs) != "mtu on vxlan.calico: mtu=8950, pods=8950" {
		t.Errorf("tunnel-mtu with an idle tunl0: %s %v %v", got[0].Status, got[0].Why, got[0].Knobs)
	}
	if got[1].Status != Candidate || got[1].Knobs[0].Device != "vxlan.calico" {
		t.Errorf("tunnel-gro with an idle tunl0: %s %v", got[1].Status, got[1].Why)
	}
	if got[2].Status != NotApplicable {
		t.Errorf("overlay-offload: VXLAN is offloaded, tunl0 is idle: %s %v", got[2].Status, got[2].Why)
	}
	in = load(t, "multiqueue-rss-one-cpu")
	in.Tunnels = []inspect.Device{{Name: "tunl0", Kind: "ipip", MTU: 1480}}
	rs, _ = Lookup("native-routing")
	if got := Evaluate(rs[0], in); got.Status != NotApplicable {
		t.Errorf("native-routing on a host with only the ipip fallback device: %s %v", got.Status, got.Why)
	}
}

// A rule with neither an A/B nor the reason it has none is refused; the
// A/B becomes --set overrides with the inspection's numbers filled in.
func TestProveSets(t *testing.T) {
	base := "name: x\ntitle: t\neffect: e\nrisk: r\nevidence: [{source: s, finding: f}]\npermanent: [{kind: command, text: t}]\nknobs: [{kind: sysctl}]\nwhen: [cpus]\n"
	if _, err := ParseRule([]byte(base)); err == nil || !strings.Contains(err.Error(), "give prove") {
		t.Errorf("rule without prove or noProof: %v", err)
	}
	r, err := ParseRule([]byte(base + "prove:\n  nodes: {underlayMTU: \"{underlay_mtu}\"}\n  datapaths: [{name: a, type: calico-vxlan, mtu: \"{tunnel_mtu}\"}, bridge]\n"))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := r.ProveSets(load(t, "calico-vxlan-jumbo"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nodes={underlayMTU: 9000}", "datapaths=[{name: a, type: calico-vxlan, mtu: 1450}, bridge]"}
	if !slices.Equal(sets, want) {
		t.Errorf("sets %q, want %q", sets, want)
	}
	for _, rule := range mustRules(t) {
		if !rule.Provable() {
			continue
		}
		if _, err := rule.ProveSets(load(t, "this-machine")); err != nil && !strings.Contains(err.Error(), "placeholder") {
			t.Logf("%s on this machine: %v", rule.Name, err)
		}
	}
}

func mustRules(t *testing.T) []*Rule {
	t.Helper()
	rs, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The per-queue flow count is the global table over the rx queues,
// rounded up to the power of two the kernel would make of it.
func TestFlowCntPerQueuePowerOfTwo(t *testing.T) {
	in := load(t, "multiqueue-rss-one-cpu")
	n, err := underlayDev(in)
	if err != nil {
		t.Fatal(err)
	}
	for queues, want := range map[int]string{1: "32768", 6: "8192", 8: "4096", 64: "512"} {
		n.RxQueues = queues
		if got, err := params["flow_cnt_per_queue"](in); err != nil || got != want {
			t.Errorf("%d queues: %q %v, want %s", queues, got, err, want)
		}
	}
}

// The steering mask names the online CPUs: with CPU 1 offline a mask of
// the first three would leave CPU 3 out and name the missing one.
func TestRPSMaskOfOnlineCPUs(t *testing.T) {
	for _, c := range []struct {
		cpus   int
		online string
		want   string
	}{
		{4, "", "0000000f"}, // an inspection from before online_cpus
		{4, "0-3", "0000000f"},
		{3, "0,2-3", "0000000d"},
		{2, "32-33", "00000003,00000000"},
	} {
		in := &inspect.Inspection{CPUs: c.cpus, OnlineCPUs: c.online, Underlay: "eth0", NICs: []inspect.NIC{{Name: "eth0", RxQueues: 1}}}
		if got, err := params["rps_mask"](in); err != nil || got != c.want {
			t.Errorf("%d CPUs online %q: %q %v, want %s", c.cpus, c.online, got, err, c.want)
		}
	}
	if _, err := params["rps_mask"](&inspect.Inspection{CPUs: 2, OnlineCPUs: "0-x", Underlay: "eth0", NICs: []inspect.NIC{{Name: "eth0", RxQueues: 1}}}); err == nil {
		t.Error("an unreadable CPU list gave a mask")
	}
}

// With WireGuard beside VXLAN (Calico's encryption), the MTU target fits
// WireGuard's larger overhead; an idle module fallback does not count.
func TestTargetMTUFitsEveryTunnel(t *testing.T) {
	in := load(t, "calico-vxlan-jumbo")
	base, err := targetMTU(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Tunnels = append(in.Tunnels, inspect.Device{Name: "tunl0", Kind: "ipip", MTU: 1480})
	if got, _ := targetMTU(in); got != base {
		t.Errorf("with an idle tunl0: %d, want %d", got, base)
	}
	in.Tunnels = append(in.Tunnels, inspect.Device{Name: "wireguard.cali", Kind: "wireguard", MTU: 1440})
	if got, _ := targetMTU(in); got != base-(inspect.Overhead["wireguard"]-inspect.Overhead["vxlan"]) {
		t.Errorf("with WireGuard: %d, want %d", got, base-10)
	}
}

// A stacked underlay: the default route leaves through a VLAN on the NIC
// (or a VLAN on a bond of two). The knobs that act where packets arrive
// (RFS, GRO, NUMA) name the NIC under the VLAN (each port under a bond),
// the MTU rule the VLAN's own MTU.
func TestStackedUnderlay(t *testing.T) {
	vlan := func(lower ...string) *inspect.Inspection {
		in := load(t, "calico-vxlan-jumbo")
		in.Underlay, in.UnderlayLower = "ens1f0.100", lower
		in.NICs = append(in.NICs, inspect.NIC{Name: "ens1f0.100", Virtual: true, MTU: 8000, NUMANode: -1, RxQueues: 1, TxQueues: 1,
			Queues: []inspect.RxQueue{{RPSCPUs: "0"}}})
		return in
	}
	for _, c := range []struct {
		rule string
		in   *inspect.Inspection
		want string
	}{
		{"rfs", vlan("ens1f0"), "rfs on ens1f0: rps_cpus=0000ff00, rps_flow_cnt=8192, rps_sock_flow_entries=32768"},
		{"numa-placement", vlan("ens1f0"), "placement on ens1f0: numa_node=1, placement=same-numa"},
		{"tunnel-mtu", vlan("ens1f0"), "mtu on vxlan.calico: mtu=7950, pods=7950"},
	} {
		rs, err := Lookup(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := knobText(Evaluate(rs[0], c.in).Knobs); got != c.want {
			t.Errorf("%s over a VLAN: knobs %q, want %q", c.rule, got, c.want)
		}
	}
	// A VLAN on a bond of two ports: the rules read both ports and put
	// each knob on both; the flow table is shared out over all their
	// queues (4 each on 16 CPUs: 2 cores per queue, 32768/8 per queue).
	bond := func(numa int) *inspect.Inspection {
		in := vlan("ens1f0", "ens1f1")
		port := *findNIC(in, "ens1f0")
		port.Name, port.NUMANode = "ens1f1", numa
		in.NICs = append(in.NICs, port)
		return in
	}
	for _, c := range []struct {
		rule, want string
	}{
		{"rfs", "rfs on ens1f0: rps_cpus=0000ff00, rps_flow_cnt=4096, rps_sock_flow_entries=32768; rfs on ens1f1: rps_cpus=0000ff00, rps_flow_cnt=4096, rps_sock_flow_entries=32768"},
		{"numa-placement", "placement on ens1f0: numa_node=1, placement=same-numa; placement on ens1f1: numa_node=1, placement=same-numa"},
	} {
		rs, err := Lookup(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		got := Evaluate(rs[0], bond(1))
		if knobText(got.Knobs) != c.want {
			t.Errorf("%s over a bond: %s, knobs %q (%q), want %q", c.rule, got.Status, knobText(got.Knobs), got.Why, c.want)
		}
		for _, p := range got.Permanent {
			if strings.Contains(p.Text, "NAME==") && !strings.Contains(p.Text, `NAME=="ens1f0|ens1f1"`) {
				t.Errorf("%s over a bond: udev rule %q does not match both ports", c.rule, p.Text)
			}
		}
	}
	rs, _ := Lookup("numa-placement")
	if got := Evaluate(rs[0], bond(0)); got.Status != Unknown || !strings.Contains(strings.Join(got.Why, "; "), "different NUMA nodes") {
		t.Errorf("numa-placement over ports on two NUMA nodes: %s, %q; want unknown saying so", got.Status, got.Why)
	}
	rs, _ = Lookup("rfs")
	got := Evaluate(rs[0], vlan("ens1f0", "team0"))
	if got.Status != Unknown || !strings.Contains(strings.Join(got.Why, "; "), "sits on team0, which is not a NIC") {
		t.Errorf("rfs over a port that is not a NIC: %s, %q; want unknown naming it", got.Status, got.Why)
	}
}
