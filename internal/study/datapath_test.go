package study

import (
	"strings"
	"testing"
)

const knobStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: knobs
spec:
  datapaths:
    - flannel-vxlan
    - name: flannel-off
      type: flannel-vxlan
      mtu: 1400
      offloads: {tx-udp_tnl-segmentation: off, gro: true}
    - {name: calico-wp, type: calico-vxlan, policy: wp}
  link: {rate: 100mbit}
  tunings: [baseline]
  workloads: [{tool: iperf3}]
  replicas: [1]
  trials: 1
  duration: 3s
`

func TestDatapathForms(t *testing.T) {
	s, err := Parse("knobs.yaml", []byte(knobStudy), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	dp := s.Spec.Datapaths
	if len(dp) != 3 {
		t.Fatalf("got %d datapaths", len(dp))
	}
	if !dp[0].Plain() || dp[0].Name != "flannel-vxlan" || dp[0].Type != "flannel-vxlan" {
		t.Errorf("shorthand: %+v", dp[0])
	}
	off := dp[1]
	if off.Name != "flannel-off" || off.Type != "flannel-vxlan" || off.MTU != 1400 {
		t.Errorf("mapping: %+v", off)
	}
	// "true" and "off" are normalised to on/off, as ethtool -K writes them.
	if off.Offloads["tx-udp_tnl-segmentation"] != "off" || off.Offloads["gro"] != "on" || !off.OffloadOn("gro") {
		t.Errorf("offloads: %v", off.Offloads)
	}
	if got := strings.Join(off.OffloadNames(), ","); got != "gro,tx-udp_tnl-segmentation" {
		t.Errorf("offload order: %s", got)
	}
	if dp[2].Policy != PolicyWith {
		t.Errorf("policy: %+v", dp[2])
	}
	if got := strings.Join(s.DatapathNames(), ","); got != "flannel-vxlan,flannel-off,calico-wp" {
		t.Errorf("names: %s", got)
	}
	if r, _ := s.Spec.Link.RateBits(); r != 100_000_000 {
		t.Errorf("link rate %d", r)
	}
	cells := s.Cells()
	if cells[0].Datapath != "flannel-vxlan" || cells[1].Datapath != "flannel-off" {
		t.Errorf("cells use names: %+v", cells[:2])
	}

	// A round trip keeps the shorthand short and the knobs intact.
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "- flannel-vxlan\n") || !strings.Contains(string(b), "tx-udp_tnl-segmentation: \"off\"") && !strings.Contains(string(b), "tx-udp_tnl-segmentation: off") {
		t.Errorf("marshal:\n%s", b)
	}
	s2, err := Parse("again.yaml", b, Options{}, testCatalog)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, b)
	}
	if s2.Spec.Datapaths[1].MTU != 1400 || s2.Spec.Datapaths[1].Offloads["gro"] != "on" {
		t.Errorf("round trip: %+v", s2.Spec.Datapaths[1])
	}
}

// Every bad knob is one error naming the file, line and field.
func TestDatapathErrors(t *testing.T) {
	cat := testCatalog
	cat.CheckDatapath = func(d Datapath, underlay int) map[string]string {
		if d.MTU > underlay-50 {
			return map[string]string{"mtu": "too big for the overlay"}
		}
		return nil
	}
	cases := []struct {
		name, entry, want string
		line              int
	}{
		{"unknown key", "{name: x, type: flannel-vxlan, colour: red}", `spec.datapaths[0].colour: unknown datapath field "colour"`, 6},
		{"unknown type", "{name: x, type: nosuch}", `spec.datapaths[0]: unknown datapath "nosuch"`, 6},
		{"offload value", "{type: flannel-vxlan, offloads: {gro: maybe}}", `spec.datapaths[0].offloads.gro: want on or off, got "maybe"`, 6},
		{"offload name", "{type: flannel-vxlan, offloads: {'gro; reboot': off}}", `spec.datapaths[0].offloads.gro; reboot: offload "gro; reboot" is not an ethtool feature name`, 6},
		{"offloads list", "{type: flannel-vxlan, offloads: [gro]}", `spec.datapaths[0].offloads: offloads is a mapping`, 6},
		{"offload devices value", "{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: nic}", `spec.datapaths[0].offloadDevices: want all (the underlay NIC and the tunnel device), underlay or tunnel, got "nic"`, 6},
		{"offload devices list", "{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: [tunnel]}", `spec.datapaths[0].offloadDevices: want all`, 6},
		{"offload devices alone", "{type: flannel-vxlan, offloadDevices: tunnel, podOffloads: {gro: off}}", `spec.datapaths[0].offloadDevices: offloadDevices says which node devices offloads go on; without offloads it changes nothing`, 6},
		{"policy", "{type: calico-vxlan, policy: strict}", `spec.datapaths[0].policy: must be wp`, 6},
		{"wiring", "{type: calico-vxlan, wiring: ebpf}", `spec.datapaths[0].wiring: must be netlink or cni`, 6},
		{"implementation", "{type: calico-vxlan, implementation: felix}", `spec.datapaths[0].implementation: must be builtin, flanneld or bird, got "felix"`, 6},
		{"mtu range", "{type: calico-vxlan, mtu: 100}", `spec.datapaths[0].mtu: must be between 576 and 65535`, 6},
		{"mtu check", "{type: calico-vxlan, mtu: 1480}", `spec.datapaths[0].mtu: too big for the overlay`, 6},
		{"name", "{name: 'a b', type: calico-vxlan}", `spec.datapaths[0].name: "a b"`, 6},
		{"twice", "calico-vxlan, calico-vxlan", `datapath "calico-vxlan" listed twice`, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(knobStudy, knobStudy[strings.Index(knobStudy, "  datapaths:"):strings.Index(knobStudy, "  link:")],
				"  datapaths: ["+c.entry+"]\n", 1)
			_, err := Parse("bad.yaml", []byte(y), Options{}, cat)
			if err == nil {
				t.Fatalf("accepted:\n%s", y)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bad.yaml:6") {
				t.Errorf("got %q, want bad.yaml:%d and %q", err, c.line, c.want)
			}
		})
	}
}

func TestLinkRate(t *testing.T) {
	for in, want := range map[string]uint64{"1gbit": 1e9, "100mbit": 1e8, "10G": 1e10, "2.5Gbit": 25e8, "25000000": 25e6, "100Mb": 1e8} {
		got, err := ParseLineRate(in)
		if err != nil || got != want {
			t.Errorf("%s: got %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"fast", "0", "1kbit", "5T", "-1G", "1gbit; rm"} {
		if _, err := ParseLineRate(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	// tc reads bps as bytes per second: refused, with both readings.
	for in, want := range map[string]string{
		"100mbps": `invalid rate "100mbps": tc reads mbps as megabytes per second; write 100mbit (or 800mbit for 100 MB/s)`,
		"1Gbps":   `tc reads gbps as gigabytes per second; write 1gbit (or 8gbit for 1 GB/s)`,
		"2.5kbps": `tc reads kbps as kilobytes per second; write 2.5kbit (or 20kbit for 2.5 KB/s)`,
		"8000bps": `tc reads bps as bytes per second; write 8000bit (or 64000bit for 8000 B/s)`,
		"1tbps":   `tc reads tbps as terabytes per second`,
	} {
		if _, err := ParseLineRate(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
	y := strings.Replace(knobStudy, "rate: 100mbit", "rate: 100mbps", 1)
	if _, err := Parse("bad.yaml", []byte(y), Options{}, testCatalog); err == nil || !strings.HasPrefix(err.Error(), `bad.yaml:13: spec.link.rate: invalid rate "100mbps": tc reads mbps`) {
		t.Errorf("got %v", err)
	}
	y = strings.Replace(knobStudy, "rate: 100mbit", "rate: warp9", 1)
	_, err := Parse("bad.yaml", []byte(y), Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:13") || !strings.Contains(err.Error(), `spec.link.rate: invalid rate "warp9"`) {
		t.Errorf("got %v", err)
	}
}

// implementation: bird is a known value; which datapath accepts it is the
// catalog's call (CheckDatapath), reported on the same field.
func TestDatapathImplementationBird(t *testing.T) {
	entry := func(e string) string {
		return strings.Replace(knobStudy, knobStudy[strings.Index(knobStudy, "  datapaths:"):strings.Index(knobStudy, "  link:")],
			"  datapaths: ["+e+"]\n", 1)
	}
	cat := testCatalog
	cat.Datapaths = append([]string{"calico-routed"}, cat.Datapaths...)
	s, err := Parse("bird.yaml", []byte(entry("{name: calico-bgp, type: calico-routed, implementation: bird}")), Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Spec.Datapaths[0]; d.Implementation != ImplBird || d.Type != "calico-routed" || d.Plain() {
		t.Errorf("parsed %+v", d)
	}
	cat.CheckDatapath = func(d Datapath, _ int) map[string]string {
		if d.Implementation == ImplBird && d.Type != "calico-routed" {
			return map[string]string{"implementation": "only calico-routed"}
		}
		return nil
	}
	_, err = Parse("bad.yaml", []byte(entry("{type: flannel-vxlan, implementation: bird}")), Options{}, cat)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:6: spec.datapaths[0].implementation: only calico-routed") {
		t.Errorf("bird on flannel-vxlan: %v", err)
	}
}

// offloadDevices narrows a datapath's offloads to the underlay or the
// tunnel device; left out (or all) they go on both, as before it existed.
// Without offloads it is left out of the written study, so an engine that
// drops the offloads (kube) still writes a study that parses back.
func TestOffloadDevices(t *testing.T) {
	entry := func(e string) string {
		return strings.Replace(knobStudy, knobStudy[strings.Index(knobStudy, "  datapaths:"):strings.Index(knobStudy, "  link:")],
			"  datapaths: ["+e+"]\n", 1)
	}
	for in, want := range map[string][2]bool{
		"{type: flannel-vxlan, offloads: {gro: off}}":                           {true, true},
		"{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: all}":      {true, true},
		"{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: underlay}": {true, false},
		"{type: flannel-vxlan, offloads: {gro: off}, offloadDevices: tunnel}":   {false, true},
	} {
		s, err := Parse("o.yaml", []byte(entry(in)), Options{}, testCatalog)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		d := s.Spec.Datapaths[0]
		if got := [2]bool{d.OffloadsOnUnderlay(), d.OffloadsOnTunnel()}; got != want {
			t.Errorf("%s: on underlay, tunnel %v; want %v", in, got, want)
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("again.yaml", b, Options{}, testCatalog)
		if err != nil || back.Spec.Datapaths[0].OffloadDevices != d.OffloadDevices {
			t.Errorf("%s: round trip %+v, %v\n%s", in, back, err, b)
		}
	}
	s, err := Parse("o.yaml", []byte(entry("{name: x, type: flannel-vxlan, offloads: {gro: off}, offloadDevices: tunnel}")), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Datapaths[0].Offloads = nil // as the kube engine leaves them out
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "offloadDevices") {
		t.Errorf("offloadDevices written without offloads:\n%s", b)
	}
	if _, err := Parse("again.yaml", b, Options{}, testCatalog); err != nil {
		t.Errorf("re-parse: %v\n%s", err, b)
	}
}
