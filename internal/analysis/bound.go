package analysis

import (
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The physics beside a saturated UDP measurement on a shaped link: the
// highest receiver bitrate (UDP payload, as iperf3 counts it) the link
// can carry when every datagram pays the datapath's encapsulation and
// Ethernet's framing. Per datagram of P payload bytes the wire carries
//
//	P + 8 (UDP) + 20 (IPv4)          the pod's packet
//	  + encap                        outer headers of the datapath
//	  + 14 (Ethernet header) + 24    preamble 8, FCS 4, inter-frame gap 12
//
// so the bound is rate × P / (P + 66 + encap). At 1 Gbit/s with the
// seed-003 paper's MTU 1450 (P = 1422) it is 924.6 Mbit/s for VXLAN
// (encap 50: outer IPv4, UDP, VXLAN and inner Ethernet) and 938.0 Mbit/s
// for flannel's UDP backend (encap 28: outer IPv4 and UDP), the paper's
// 923.0 and 937.8.
const (
	udpIPHeaders = 28
	ethernetWire = 14 + 24
)

// encapOverhead is the bytes each datapath type adds in front of a pod's
// IPv4 packet; a type missing here gets no bound.
var encapOverhead = map[string]int{
	"flannel-vxlan": 50,
	"calico-vxlan":  50,
	"flannel-udp":   28,
	"calico-ipip":   20,
	"bridge":        0,
	"host":          0,
	"calico-routed": 0,
}

// EthernetBound is the highest UDP payload bitrate (bit/s) of datagrams
// of payload bytes through encap bytes of encapsulation on an Ethernet
// link of linkBits bit/s.
func EthernetBound(linkBits float64, payload, encap int) float64 {
	return linkBits * float64(payload) / float64(payload+udpIPHeaders+encap+ethernetWire)
}

// Bound is one saturated UDP cell on a shaped link: the bound beside the
// measured receiver bitrate.
type Bound struct {
	results.Cell
	// Encap is the encapsulation overhead and Payload the datagram
	// payload, bytes.
	Encap   int `json:"encap_bytes"`
	Payload int `json:"payload_bytes"`
	// LinkBits, Offered, Bound and Measured are bit/s.
	LinkBits float64 `json:"link_bps"`
	Offered  float64 `json:"offered_bps"`
	Bound    float64 `json:"bound_bps"`
	Measured float64 `json:"measured_bps"`
	// Sent is what the senders sent where they fell behind the offered
	// rate (sentRate), bit/s; 0 where they kept up. Below Bound, the link
	// was never saturated and Measured is not the path's limit.
	Sent float64 `json:"sent_bps,omitempty"`
	// Share is Measured / Bound: how much of the bound the cell's mean
	// reached.
	Share float64 `json:"measured_share"`
}

// BoundScale shows the bound's bitrates (link, offered, sent, bound and
// measured) in Mbit/s with one decimal, the unit the seed-003 paper gives
// them in (923.0 and 937.8 Mbit/s): Display's Gbit/s would read 0.92.
var BoundScale = Scale{Factor: 1e-6, Unit: "Mbit/s", Decimals: 1}

// Reached reports whether what was sent reached the bound.
func (b Bound) Reached() bool { return b.Sent == 0 || b.Sent >= b.Bound }

// bounds lists, for every UDP cell whose offered rate reaches the bound
// of a shaped link (spec.link.rate), the bound and the measured mean, and
// what its senders sent where they fell behind.
func bounds(s *study.Study, rows []Row) []Bound {
	link, err := s.Spec.Link.RateBits()
	if err != nil || link == 0 {
		return nil
	}
	idx := Index(rows)
	var out []Bound
	for _, r := range rows {
		if r.Metric != results.MetricBitrate || r.CPU >= 0 || r.N == 0 {
			continue
		}
		d, ok1 := s.Datapath(r.Datapath)
		w, ok2 := variant(s, r.Workload)
		if !ok1 || !ok2 || w.Protocol != "udp" {
			continue
		}
		typ := d.Type
		if typ == "" {
			typ = d.Name
		}
		encap, ok := encapOverhead[typ]
		if !ok {
			continue
		}
		mtu := d.MTU
		if mtu == 0 {
			mtu = s.Spec.Nodes.UnderlayMTU - encap
		}
		payload := mtu - udpIPHeaders
		if n, err := strconv.Atoi(w.Length); err == nil && n > 0 && n < payload {
			payload = n
		}
		off, ok := idx[Key{Cell: r.Cell, Metric: "offered_bps", CPU: -1}]
		if !ok || off.N == 0 {
			continue
		}
		b := EthernetBound(float64(link), payload, encap)
		if off.Mean < b {
			continue // not saturated: the offered rate is what arrives
		}
		bd := Bound{Cell: r.Cell, Encap: encap, Payload: payload, LinkBits: float64(link),
			Offered: off.Mean, Bound: b, Measured: r.Mean, Share: r.Mean / b}
		if sent, behind := sentRate(idx, r.Cell, off.Mean); behind {
			bd.Sent = sent
		}
		out = append(out, bd)
	}
	return out
}

// variant finds a workload variant of the study by its cell name.
func variant(s *study.Study, name string) (study.Workload, bool) {
	for _, w := range s.Variants() {
		if w.Name == name {
			return w, true
		}
	}
	return study.Workload{}, false
}

func fmtf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
