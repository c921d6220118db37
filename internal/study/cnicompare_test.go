package study_test

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// cni-compare sets every number of seed 004's Table III beside its
// entry, as the counters' and the trace's counts: the rows the paper
// gives for Calico-np and Calico-wp intra-host hold for both overlays.
func TestCNICompareTableIII(t *testing.T) {
	s, err := study.Resolve("cni-compare", study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][4]float64{ // intra chains, rules; inter chains, rules
		"flannel": {3, 5, 10, 21}, "weave": {3, 5, 10, 21}, "cilium": {0, 0, 4, 20}, "kube-router": {3, 5, 6, 10},
		"calico-wp-ipip": {3, 17, 10, 46}, "calico-np-ipip": {3, 5, 10, 22}, "calico-wp-xsub": {3, 17, 6, 28}, "calico-np-xsub": {3, 5, 6, 12},
	}
	got := map[[3]string]float64{}
	for _, r := range s.Spec.Reference {
		if r.Value != nil {
			got[[3]string{r.Datapath, r.Workload, r.Metric}] = *r.Value
		}
	}
	for dp, row := range table {
		for _, prefix := range []string{"iptables_path_", "trace_path_"} {
			for i, k := range [][2]string{{"tcp-intra", "chains"}, {"tcp-intra", "rules"}, {"tcp-inter", "chains"}, {"tcp-inter", "rules"}} {
				key := [3]string{dp, k[0], prefix + k[1] + "_count"}
				if v, ok := got[key]; !ok || v != row[i] {
					t.Errorf("%v: reference %v (present %v), want Table III's %v", key, v, ok, row[i])
				}
			}
		}
	}
}

// The paper's cost per packet and the measured pair beside its
// background load are its netperf stream with 4 MB sends, as the bulk
// TCP is: every such workload writes iperf3's largest, 1 MiB, in every
// profile; and the quick profile measures each kind once, the cost per
// packet included.
func TestCNICompareWritesAndQuick(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, prof := range []string{"", "quick", "decide"} {
		s, err := study.Resolve("cni-compare", study.Options{Profile: prof}, cat)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, w := range s.Spec.Workloads {
			stream := w.Tool == "iperf3" && w.Protocol == "tcp"
			if stream && w.Length != "1M" {
				t.Errorf("profile %q: workload %s writes %q, want 1M", prof, w.Name, w.Length)
			}
			switch {
			case w.CPP:
				kinds["cpp"] = true
			case w.Background != nil:
				kinds["background"] = true
			case stream:
				kinds["bulk"] = true
			default:
				kinds[w.Tool] = true
			}
		}
		if prof == "quick" && len(kinds) != 6 {
			t.Errorf("quick profile measures %v, want bulk, cpp, background, qperf, ab and podstartup", kinds)
		}
	}
}

// cni-compare sets seed 004's inter-host throughput (Fig. 10a, given in
// the text only as each class's span: VXLAN overlays with offload 14 ~
// 15.5 Gb/s, Layer-3 routing 18 ~ 19.7) beside each CNI of the class,
// each native CNI over Flannel as the span the class ends allow (a
// ratio derived here, as its note says, like Calico IP-in-IP's), and
// the ~2 Gb/s one background connection costs on one host (Fig. 12's
// text), every CNI's, as a difference from no background connection.
func TestCNICompareFig10aAndBackground(t *testing.T) {
	s, err := study.Resolve("cni-compare", study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ low, high float64 }
	want := map[string]span{ // "datapath against" -> the published span
		"flannel": {14e9, 15.5e9}, "weave": {14e9, 15.5e9}, "cilium": {14e9, 15.5e9},
		"kube-router": {18e9, 19.7e9}, "calico-wp-xsub": {18e9, 19.7e9}, "calico-np-xsub": {18e9, 19.7e9},
		"kube-router flannel": {1.161, 1.407}, "calico-wp-xsub flannel": {1.161, 1.407}, "calico-np-xsub flannel": {1.161, 1.407},
	}
	got := map[string]span{}
	var bg []study.Reference
	ratios := 0
	for _, r := range s.Spec.Reference {
		switch {
		case r.Workload == "tcp-inter" && r.Metric == "bitrate" && r.Ratio != nil:
			// The paper gives Fig. 10a's numbers, never their ratio; the
			// report shows a reference as the paper's, so the note beside
			// it must say the ratio is ours.
			if !strings.HasPrefix(r.Note, "derived here from Fig. 10a's text") || !strings.HasSuffix(r.Note, "the paper gives no ratio") {
				t.Errorf("%s over %s, ratio %v: note %q does not say the ratio is derived here from Fig. 10a", r.Datapath, r.Against, *r.Ratio, r.Note)
			}
			ratios++
			if r.UpTo != nil {
				got[r.Datapath+" "+r.Against] = span{*r.Ratio, *r.UpTo}
			}
		case r.Workload == "tcp-inter" && r.Metric == "bitrate" && r.UpTo != nil:
			if !strings.HasPrefix(r.Note, "Fig. 10a") {
				t.Errorf("%s's span %q cites no figure", r.Datapath, r.Note)
			}
			if r.Value != nil {
				got[r.Datapath] = span{*r.Value, *r.UpTo}
			}
		case r.Difference != nil:
			bg = append(bg, r)
		}
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: span %v (present %v), want Fig. 10a's %v", k, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("spans %v, want only %v", got, want)
	}
	if ratios != 4 {
		t.Errorf("%d ratios at tcp-inter, want 4: Calico IP-in-IP without policy over with, and the three native CNIs over Flannel", ratios)
	}
	if len(bg) != 1 || bg[0].Datapath != "" || bg[0].Workload != "bg-intra@bg1" || bg[0].AgainstWorkload != "bg-intra@bg0" ||
		bg[0].Metric != "bitrate" || *bg[0].Difference != -2e9 || bg[0].UpTo != nil || !strings.HasPrefix(bg[0].Note, "Fig. 12") {
		t.Errorf("background references %+v, want one: bg-intra@bg1 less bg-intra@bg0, -2e9 bit/s, every datapath, citing Fig. 12", bg)
	}
}

// The paper's ConnectX-4 offloads VXLAN's segmentation but not
// IP-in-IP's, and its Flannel-off turns VXLAN's off: so both IP-in-IP
// entries, whose references (Fig. 10a, Table II at 400 clients) are of
// that NIC, turn the underlay's IP-in-IP segmentation off as flannel-off
// turns the UDP tunnel's, on the underlay alone (tunl0 need not have the
// feature), and the entries with a NIC's offload (flannel, and every
// other) turn nothing off, in every profile.
func TestCNICompareTunnelOffloadAsThePapersNIC(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, prof := range []string{"", "quick", "decide", "paper"} {
		s, err := study.Resolve("cni-compare", study.Options{Profile: prof}, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range s.Spec.Datapaths {
			switch d.Name {
			case "calico-wp-ipip", "calico-np-ipip":
				if len(d.Offloads) != 1 || d.Offloads["tx-ipxip4-segmentation"] != "off" || d.OffloadDevices != study.OffloadsUnderlay {
					t.Errorf("profile %q: %s offloads %v on %q, want tx-ipxip4-segmentation off on the underlay", prof, d.Name, d.Offloads, d.OffloadDevices)
				}
			case "flannel-off":
				if d.Offloads["tx-udp_tnl-segmentation"] != "off" {
					t.Errorf("profile %q: flannel-off offloads %v, want tx-udp_tnl-segmentation off", prof, d.Offloads)
				}
			default:
				if len(d.Offloads) != 0 {
					t.Errorf("profile %q: %s offloads %v, want none (the paper's NIC offloads its tunnel, or it has none)", prof, d.Name, d.Offloads)
				}
			}
		}
	}
}
