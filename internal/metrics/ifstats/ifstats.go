// Package ifstats reads per-interface packet, byte and drop counters
// (the numbers `ip -s link show DEV` prints) of devices in any network
// namespace, and differences them over a window.
package ifstats

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/netns"
)

// Counters are one device's cumulative counters.
type Counters struct {
	RxPackets, TxPackets, RxBytes, TxBytes   uint64
	RxDropped, TxDropped, RxErrors, TxErrors uint64
	MTU                                      int
}

// Read returns the counters of a device. Equivalent to:
// `ip -n NETNS -s link show DEV`.
func Read(ifc netns.Iface) (Counters, error) {
	h, err := netns.Handle(ifc.Netns)
	if err != nil {
		return Counters{}, err
	}
	defer h.Close()
	l, err := h.LinkByName(ifc.Name)
	if err != nil {
		return Counters{}, fmt.Errorf("%slink show %s: %w", ipNetns(ifc.Netns), ifc.Name, err)
	}
	a := l.Attrs()
	s := a.Statistics
	if s == nil {
		return Counters{}, fmt.Errorf("%slink show %s: no statistics", ipNetns(ifc.Netns), ifc.Name)
	}
	return Counters{
		RxPackets: s.RxPackets, TxPackets: s.TxPackets, RxBytes: s.RxBytes, TxBytes: s.TxBytes,
		RxDropped: s.RxDropped, TxDropped: s.TxDropped, RxErrors: s.RxErrors, TxErrors: s.TxErrors,
		MTU: a.MTU,
	}, nil
}

// ipNetns is the start of the ip command that reads a device of ns:
// "ip -n NS ", or "ip " for this process's namespace ("": a node's own
// devices, read by its agent), not "ip -n  ".
func ipNetns(ns string) string {
	if ns == "" {
		return "ip "
	}
	return "ip -n " + ns + " "
}

// Delta is the change of counters over a window (b - a; a counter that
// went backwards, e.g. a re-created device, gives 0).
func Delta(a, b Counters) Counters {
	d := func(x, y uint64) uint64 {
		if y < x {
			return 0
		}
		return y - x
	}
	return Counters{
		RxPackets: d(a.RxPackets, b.RxPackets), TxPackets: d(a.TxPackets, b.TxPackets),
		RxBytes: d(a.RxBytes, b.RxBytes), TxBytes: d(a.TxBytes, b.TxBytes),
		RxDropped: d(a.RxDropped, b.RxDropped), TxDropped: d(a.TxDropped, b.TxDropped),
		RxErrors: d(a.RxErrors, b.RxErrors), TxErrors: d(a.TxErrors, b.TxErrors),
		MTU: b.MTU,
	}
}

// WirePackets estimates the packets the wire carried from what the
// device received. With GRO/GSO a device counts one skb for up to 64 KB,
// so skb counts differ between datapaths for the same bulk traffic:
// bytes / MTU (rounded up) counts the MTU-sized packets a wire would
// carry. Small packets (request/response, short UDP datagrams) are not
// merged and each is far below the MTU, so there the skb count is the
// packet count, and bytes / MTU would count a tenth of them or fewer: the
// larger of the two is taken.
func (c Counters) WirePackets() float64 {
	if c.MTU <= 0 {
		return float64(c.RxPackets)
	}
	return float64(max(c.RxPackets, (c.RxBytes+uint64(c.MTU)-1)/uint64(c.MTU)))
}
