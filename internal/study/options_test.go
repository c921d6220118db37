package study

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

func workloadStudy(workloads string) string {
	return strings.Replace(knobStudy, "workloads: [{tool: iperf3}]", "workloads: "+workloads, 1)
}

// Bounds, requirements and defaults come from the tools' descriptions;
// each error names file, line and the field (the scalar or the list's
// element).
func TestOptionsFromDescriptions(t *testing.T) {
	for _, tc := range []struct {
		workloads, want string
	}{
		{"[{tool: sockperf, messageSize: 1}]", "w.yaml:15: spec.workloads[0].messageSize: messageSize must be between 14 and 65000 (sockperf's smallest message is 14 B), got 1"},
		{"[{tool: sockperf, messageSizes: [14, 70000]}]", "spec.workloads[0].messageSizes[1]: messageSize must be between 14 and 65000"},
		{"[{tool: iperf3, parallels: [1, 200]}]", "spec.workloads[0].parallels[1]: parallel must be between 1 and 128 (iperf3's limit on -P), got 200"},
		{"[{tool: ab, concurrency: [1, 0]}]", "spec.workloads[0].concurrency[1]: concurrency must be between 1 and 20000"},
		{"[{tool: iperf3, protocol: udp}]", "spec.workloads[0].rate: a UDP test needs an offered bitrate (rate or rates): iperf3's UDP default"},
		{"[{tool: sockperf, size: 5M}]", "spec.workloads[0].size: tool sockperf has no option size (sockperf takes: messageSize, messageSizes, placement, pin, cpp, counters, target)"},
		{"[{tool: ab, protocol: udp}]", "spec.workloads[0].protocol: tool ab does not support protocol \"udp\" (supported: tcp)"},
	} {
		_, err := Parse("w.yaml", []byte(workloadStudy(tc.workloads)), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.workloads, err, tc.want)
		}
	}
	s, err := Parse("w.yaml", []byte(workloadStudy("[{tool: ab}, {tool: sockperf, protocol: udp}, {name: sw, tool: sockperf, messageSizes: [14, 100]}, {tool: iperf3}]")), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	ab, sp, sw, ip := s.Spec.Workloads[0], s.Spec.Workloads[1], s.Spec.Workloads[2], s.Spec.Workloads[3]
	if ab.Size != "5M" || len(ab.Concurrency) != 1 || ab.Concurrency[0] != 1 || ab.Placement != PlacementInterNode {
		t.Errorf("ab defaults: %+v", ab)
	}
	if sp.MessageSize != 64 || sw.MessageSize != 0 {
		t.Errorf("sockperf default message: %d; with a sweep: %d (want 64, 0)", sp.MessageSize, sw.MessageSize)
	}
	if ip.Length != "" || ip.Parallel != 0 || ip.Rate != "" {
		t.Errorf("iperf3 options left to iperf3 were filled: %+v", ip)
	}
}

func TestCheckDefault(t *testing.T) {
	for _, tools := range testTools {
		for _, o := range tools.Options {
			if err := CheckDefault(o); err != nil {
				t.Errorf("%s: %v", tools.Name, err)
			}
		}
	}
	if CheckDefault(spec.Option{Name: OptMessageSize, Default: "64B"}) == nil {
		t.Error("a non-integer messageSize default passes")
	}
	if CheckDefault(spec.Option{Name: "colour", Default: "red"}) == nil {
		t.Error("an unknown option passes")
	}
}

// The seed 001 options: MSS bounds (88 .. MTU-40), loss ceiling in
// (0, 100)%, placement names; each error names file, line and field.
func TestNICModesOptions(t *testing.T) {
	for _, tc := range []struct {
		workloads, want string
	}{
		{"[{tool: iperf3, mss: 40}]", "w.yaml:15: spec.workloads[0].mss: mss must be between 88 and 65495"},
		{"[{tool: iperf3, msses: [536, 9000]}]", "w.yaml:15: spec.workloads[0].msses[1]: mss 9000 is above what the largest pod MTU of this study allows (1500 - 40 = 1460 bytes)"},
		{"[{tool: iperf3, protocol: udp, rate: 1G, mss: 536}]", "spec.workloads[0].mss: mss is for TCP tests only"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 0%}]", "spec.workloads[0].lossCeiling: loss ceiling \"0%\" must be above 0% and below 100%"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 100%}]", "spec.workloads[0].lossCeiling: loss ceiling \"100%\" must be above 0% and below 100%"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: lots}]", "spec.workloads[0].lossCeiling: \"lots\" is not a loss ceiling"},
		{"[{tool: iperf3, lossCeiling: 3%}]", "spec.workloads[0].lossCeiling: lossCeiling is for UDP tests only"},
		{"[{tool: iperf3, protocol: udp, rate: 1G, lossCeiling: 3%}]", "spec.workloads[0].lossCeiling: lossCeiling finds the offered rate itself"},
		{"[{tool: iperf3, protocol: udp, rate: 1G, ceilingSearch: {high: 1G}}]", "spec.workloads[0].ceilingSearch: ceilingSearch tunes a lossCeiling search"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {low: 2G, high: 1G}}]", "spec.workloads[0].ceilingSearch: ceilingSearch: low 2G must be below high 1G"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {step: fast}}]", "spec.workloads[0].ceilingSearch.step: ceilingSearch.step: \"fast\" is not a bitrate"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {sender: trex}}]", "spec.workloads[0].ceilingSearch.sender:"},
		{"[{tool: sockperf, lossCeiling: 3%}]", "spec.workloads[0].lossCeiling: tool sockperf has no option lossCeiling"},
		// The workload's sender: UDP only, a known one, said once.
		{"[{tool: iperf3, protocol: udp, rate: 1G, sender: trex}]", "spec.workloads[0].sender: \"trex\" is not iperf3 or pktgen"},
		{"[{tool: iperf3, sender: pktgen}]", "spec.workloads[0].sender: sender is for UDP tests only"},
		{"[{tool: sockperf, sender: pktgen}]", "spec.workloads[0].sender: tool sockperf has no option sender"},
		{"[{tool: iperf3, protocol: udp, lossCeiling: 3%, sender: iperf3, ceilingSearch: {sender: pktgen}}]",
			"spec.workloads[0].ceilingSearch.sender: \"pktgen\" differs from the workload's sender \"iperf3\"; give one"},
		{"[{tool: iperf3, protocol: udp, rates: [500M, 1G], sender: pktgen, reverse: true, target: service}]", "spec.workloads[0].sender: pktgen sending from the server (reverse) addresses the client pod itself"},
		{"[{tool: iperf3, pin: {server: far-away}}]", "w.yaml:15: spec.workloads[0].pin.server: \"far-away\" is neither a placement name (none, same-numa, other-numa, same-core, other-core) nor a CPU list"},
		{"[{tool: iperf3, pin: {server: same-numa, client: other-core}}]", "spec.workloads[0].pin.client: only one end may be placed by name"},
		{"[{tool: iperf3, pin: {server: other-numa, fallback: maybe}}]", "spec.workloads[0].pin.fallback: \"maybe\" is not refuse or mark"},
	} {
		_, err := Parse("w.yaml", []byte(workloadStudy(tc.workloads)), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.workloads, err, tc.want)
		}
	}
	// pktgen sends parallel streams as iperf3 does, each at the rate.
	if _, err := Parse("w.yaml", []byte(workloadStudy("[{tool: iperf3, protocol: udp, rate: 1G, sender: pktgen, parallels: [1, 4]}]")), Options{}, testCatalog); err != nil {
		t.Errorf("pktgen with parallel streams: %v", err)
	}
	s, err := Parse("w.yaml", []byte(workloadStudy(`[{name: c, tool: iperf3, protocol: udp, length: "1400", lossCeiling: 0.5%},
		{name: m, tool: iperf3, msses: [88, 1460]}, {name: n, tool: iperf3, pin: {server: other-numa, client: "0", fallback: mark}}]`)), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := s.Spec.Workloads[0].Ceiling()
	if !ok || err != nil || c.Pct != 0.5 || c.Low != 1e6 || c.High != 1e10 || c.Step != 0 || c.Rel != 0.01 || c.Probe != DefaultCeilingProbe || c.Sender != SenderIperf3 {
		t.Errorf("ceiling defaults %+v %v %v", c, ok, err)
	}
	// A step is a bitrate or a share of the rate found; one is not both.
	for _, tc := range []struct {
		step      string
		abs, rel  float64
		bad, most string
	}{
		{step: "20M", abs: 20e6, most: "11"},
		{step: "2%", rel: 0.02, most: "21"},
		{step: "0.05%", bad: "from 0.1% to 50%"},
		{step: "60%", bad: "from 0.1% to 50%"},
		{step: "x%", bad: "from 0.1% to 50%"},
	} {
		w := s.Spec.Workloads[0]
		w.CeilingSearch = &CeilingSearch{Step: tc.step}
		c, _, err := w.Ceiling()
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("step %s: %v, want %q", tc.step, err, tc.bad)
			}
		case err != nil || c.Step != tc.abs || c.Rel != tc.rel || fmt.Sprint(c.MostProbes()) != tc.most:
			t.Errorf("step %s: %+v (most probes %g) %v", tc.step, c, c.MostProbes(), err)
		}
	}
	var names []string
	for _, v := range s.Variants() {
		names = append(names, v.Name+"="+strconv.Itoa(v.MSS))
	}
	if got := strings.Join(names, " "); got != "c=0 m@mss88=88 m@mss1460=1460 n=0" {
		t.Errorf("variants %s", got)
	}
}
