package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	datapaths := []string{"bridge", "calico-ipip", "calico-routed", "calico-vxlan", "flannel-udp", "flannel-vxlan", "geneve", "gre", "host", "macvlan", "ipvlan", "ipvlan-l3"}
	fields := []string{"nodes", "datapaths", "tunings", "workloads", "replicas", "trials", "duration", "warmup", "cooldown"}
	for _, c := range []struct {
		name  string
		known []string
		want  string
	}{
		{"flanel-vxlan", datapaths, "flannel-vxlan"}, // a dropped letter
		{"calico-vxaln", datapaths, "calico-vxlan"},  // swapped letters
		{"replica", fields, "replicas"},
		{"warmUp", fields, "warmup"}, // case only
		{"Bridge", datapaths, "bridge"},
		{"cilium", datapaths, ""},  // not a slip of any
		{"gree", datapaths, "gre"}, // short names: one edit
		{"ipvlan-l2", datapaths, "ipvlan-l3"},
		{"bridge", datapaths, ""}, // known: nothing to suggest
		{"", datapaths, ""},
		{"vxlan", []string{"vxlan1", "vxlan2"}, ""},         // a tie suggests neither
		{"lenght", []string{"length", "lengths"}, "length"}, // a swap is one edit
		{"rsf", []string{"rps", "rfs", "rps+"}, "rfs"},
		{"iperf", []string{"ab", "iperf3", "qperf", "sockperf"}, "iperf3"}, // the extension wins a tie
		{"mtu", []string{"mss", "rate"}, ""},                               // two edits of three letters: beyond the limit, even alone
		{"durtion", []string{"duration", "protocol"}, "duration"},
		{"maxSteal", []string{"maxStealPct", "maxOutsidePct"}, "maxStealPct"}, // an abbreviation
		{"dir", []string{"where", "direction"}, "direction"},
		{"max", []string{"maxStealPct", "maxOutsidePct"}, ""}, // begins two
		{"di", []string{"direction"}, ""},                     // too short to tell
		{"rps", []string{"rps", "rps+"}, ""},                  // known: nothing to suggest
	} {
		if got := Closest(c.name, c.known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if h := Hint("replica", fields); h != `did you mean "replicas"? ` {
		t.Errorf("Hint: %q", h)
	}
	if h := Hint("zzz", fields); h != "" {
		t.Errorf("Hint of nothing near: %q", h)
	}
}

func FuzzClosest(f *testing.F) {
	known := []string{"bridge", "host", "calico-vxlan"}
	f.Add("brige")
	f.Add("")
	f.Add("ü∂")
	f.Fuzz(func(t *testing.T, name string) {
		got := Closest(name, known)
		if got == "" {
			return
		}
		if got == name {
			t.Errorf("suggested the name itself: %q", name)
		}
		found := false
		for _, k := range known {
			found = found || k == got
		}
		if !found {
			t.Errorf("suggested %q, not a known name", got)
		}
	})
}

// TestNearest: one slip is Closest's; a family of equally near names is
// listed, up to most; none near, or too many, is nil.
func TestNearest(t *testing.T) {
	have := []string{"bitrate", "rtt_p50_us", "rtt_p90_us", "rtt_p99_us", "rtt_us", "rtt_ms"}
	for _, tc := range []struct {
		name string
		most int
		want []string
	}{
		{"bitrat", 4, []string{"bitrate"}},
		{"rtt", 4, []string{"rtt_us", "rtt_ms"}},
		{"rtt_p95_us", 4, []string{"rtt_p90_us", "rtt_p99_us"}},
		{"rtt_p95_us", 1, nil},
		{"zzz", 4, nil},
	} {
		if got := Nearest(tc.name, have, tc.most); !slices.Equal(got, tc.want) {
			t.Errorf("Nearest(%q, %d) = %q, want %q", tc.name, tc.most, got, tc.want)
		}
	}
}

func TestSlip(t *testing.T) {
	known := []string{"requests_per_s", "rtt_mean_us", "bitrate", "rps", "rfs"}
	for name, want := range map[string]string{
		"request_per_s": "requests_per_s", "bitarte": "bitrate", "rtt_max_us": "", "retransmits": "",
		"bitrate": "", "rxs": "", // rps and rfs both one edit away: no slip of one
	} {
		if got := Slip(name, known); got != want {
			t.Errorf("Slip(%q) = %q, want %q", name, got, want)
		}
	}
}
