package wire

import (
	"fmt"
	"math"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// FramingOverhead is what an Ethernet frame costs on the wire beyond the
// bytes the kernel counts (destination MAC to payload): preamble and SFD
// 8, FCS 4, inter-frame gap 12. The link-rate shaper charges it per
// frame, so goodput at line rate matches a real NIC of that speed.
const FramingOverhead = 24

// MinFrameOnWire is the least an Ethernet frame costs on the wire, in
// the bytes the shaper charges: a frame shorter than 60 bytes (64 with
// the FCS, which FramingOverhead counts) is padded to 60, so it takes
// 60 + FramingOverhead. The kernel adds the overhead first and then
// raises the length to the rate's mpu (psched_l2t_ns,
// include/net/sch_generic.h), so the mpu is this sum, not 60: without it
// a 42-byte ARP or a bare TCP ACK (54 bytes) was charged 66 and 78 bytes
// where a NIC sends 84.
const MinFrameOnWire = 60 + FramingOverhead

// ShapeHandle is the handle of the shaper's root tbf qdisc. internal/impair
// puts netem under it as tbf's inner queue (class 1:1), so an impaired
// underlay is still shaped.
var ShapeHandle = netlink.MakeHandle(1, 0)

// peakFactor is how much faster than the rate tbf's peak bucket fills.
// The peak bucket is there only to bound tbf's largest packet (see
// ShapeTBF); at 1000 times the rate it refills one frame in a thousandth
// of the frame's time at the rate, far less than it takes to dequeue and
// transmit one, so it never throttles.
const peakFactor = 1000

// maxFrameOverMTU is how far a frame the shaper passes may exceed the
// device MTU: the Ethernet header (14) and a VLAN tag (4), the most a
// veth peer takes (is_skb_forwardable: mtu + hard_header_len + VLAN_HLEN).
const maxFrameOverMTU = 14 + 4

// tbfParams is what ShapeTBF asks the kernel for.
type tbfParams struct {
	opt              nl.TcTbfQopt
	rate64, peak64   uint64 // TCA_TBF_RATE64, TCA_TBF_PRATE64; 0 = not sent
	burst, peakBurst uint32 // TCA_TBF_BURST, TCA_TBF_PBURST (bytes)
}

// shapeParams computes the tbf request for rate bits/s on a device of
// that MTU. Burst is 4 ms of traffic (at least four of the device's
// largest frames, or tbf would drop them): the long-run rate is exact
// whatever the burst, and a bucket smaller than the shaper's timer
// latency on a busy machine loses tokens, i.e. line rate. The queue holds
// 20 ms beyond the burst, like a NIC ring.
//
// tbf charges its overhead once per packet it queues (psched_l2t_ns on
// qdisc_pkt_len), and TCP and forwarded GRO traffic reach the underlay
// as GSO packets of up to 64 KiB. tbf splits a GSO packet into its
// segments only when it is larger than its max_size (tbf_enqueue,
// tbf_segment, net/sched/sch_tbf.c), and with TCA_TBF_BURST max_size is
// the burst: a GSO packet no larger than the burst (every one above
// 131 Mbit/s, where 4 ms is 64 KiB) went through whole, a 44-segment
// packet paying 24 bytes of framing instead of 44 x 24, so host TCP at
// 1 Gbit/s reached 953 Mbit/s against the bound 941.5. A peak bucket
// with TCA_TBF_PBURST lowers max_size to min(burst, pburst) (tbf_change);
// with pburst one largest frame, tbf segments every GSO packet of two
// full segments or more and charges framing per segment, as a NIC's wire
// does (a GSO packet of small segments that fits one frame still pays
// once). The peak rate must exceed the rate (tbf_change refuses
// otherwise); peakFactor keeps the peak bucket from ever throttling.
// Segmenting here costs the shaping node CPU a NIC's TSO would spare it,
// and the peer receives MTU-sized packets, as from a wire.
func shapeParams(rate uint64, mtu int) (tbfParams, error) {
	var p tbfParams
	bytesPerSec := rate / 8
	if bytesPerSec == 0 {
		return p, fmt.Errorf("link rate %d bit/s is too low", rate)
	}
	if mtu <= 0 {
		return p, fmt.Errorf("device MTU %d: want a positive MTU", mtu)
	}
	frame := uint64(mtu) + maxFrameOverMTU
	burst := max(bytesPerSec/250, 4*frame)
	limit := burst + bytesPerSec/50
	if limit > math.MaxUint32 || burst > math.MaxUint32 {
		return p, fmt.Errorf("link rate %d bit/s is too high for tbf", rate)
	}
	peak := bytesPerSec * peakFactor
	p.opt.Rate.Rate = uint32(min(bytesPerSec, math.MaxUint32))
	p.opt.Rate.Overhead = FramingOverhead
	p.opt.Rate.Mpu = MinFrameOnWire
	p.opt.Rate.Linklayer = 1 // TC_LINKLAYER_ETHERNET
	p.opt.Peakrate = p.opt.Rate
	p.opt.Peakrate.Rate = uint32(min(peak, math.MaxUint32))
	p.opt.Limit = uint32(limit)
	// Buffer and Mtu are in psched ticks (64 ns); TCA_TBF_BURST and
	// TCA_TBF_PBURST take precedence in the kernel, these are for older
	// kernels.
	p.opt.Buffer = uint32(min(burst*1_000_000_000/bytesPerSec/64, math.MaxUint32))
	p.opt.Mtu = uint32(min(frame*1_000_000_000/peak/64, math.MaxUint32))
	if bytesPerSec >= 1<<32 {
		p.rate64 = bytesPerSec
	}
	if peak >= 1<<32 {
		p.peak64 = peak
	}
	p.burst, p.peakBurst = uint32(burst), uint32(frame)
	return p, nil
}

// ShapeTBF limits egress of dev in namespace ns to rate bits/s of wire
// time with a token bucket, charging FramingOverhead bytes per frame in
// the kernel (tc_ratespec.overhead, linklayer ethernet) rather than by
// lowering the rate, which could only be right for one packet size, and
// at least MinFrameOnWire (tc_ratespec.mpu, padding); a
// peak bucket makes tbf segment GSO packets so that each segment pays
// its framing (shapeParams). Equivalent to:
//
//	tc -n NS qdisc add dev DEV root handle 1: tbf rate RATE burst BURST limit LIMIT \
//	    peakrate 1000xRATE mtu MTU+18 overhead 24 mpu 84 linklayer ethernet
//
// (vishvananda/netlink's Tbf has no overhead field, so the request is
// built here.)
func ShapeTBF(ns, dev string, rate uint64) error {
	l, err := link(ns, dev)
	if err != nil {
		return err
	}
	p, err := shapeParams(rate, l.Attrs().MTU)
	if err != nil {
		return err
	}
	return netns.Do(ns, func() error {
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(l.Attrs().Index), Handle: ShapeHandle, Parent: netlink.HANDLE_ROOT})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
		options := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
		options.AddRtAttr(nl.TCA_TBF_PARMS, p.opt.Serialize())
		if p.rate64 != 0 {
			options.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(p.rate64))
		}
		if p.peak64 != 0 {
			options.AddRtAttr(nl.TCA_TBF_PRATE64, nl.Uint64Attr(p.peak64))
		}
		options.AddRtAttr(nl.TCA_TBF_BURST, nl.Uint32Attr(p.burst))
		options.AddRtAttr(nl.TCA_TBF_PBURST, nl.Uint32Attr(p.peakBurst))
		req.AddData(options)
		if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
			return fmt.Errorf("tc qdisc add dev %s root tbf rate %dbit overhead %d in %s: %w", dev, rate, FramingOverhead, ns, err)
		}
		return nil
	})
}

// Unshape removes the shaper ShapeTBF added to dev in namespace ns, and
// with it anything nested under it; the kernel gives the device back its
// default root qdisc, which is what it had before ShapeTBF (whose
// exclusive create fails on any other root). The handle is named, so a
// root qdisc that is not the shaper is refused rather than deleted.
// Equivalent to:
//
//	tc -n NS qdisc del dev DEV root handle 1:
func Unshape(ns, dev string) error {
	h, err := netns.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("find %s in %s: %w", dev, ns, err)
	}
	q := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: ShapeHandle, Parent: netlink.HANDLE_ROOT}, QdiscType: "tbf"}
	if err := h.QdiscDel(q); err != nil {
		return fmt.Errorf("tc qdisc del dev %s root handle 1: in %s: %w", dev, ns, err)
	}
	return nil
}

// link is dev in namespace ns.
func link(ns, dev string) (netlink.Link, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("find %s in %s: %w", dev, ns, err)
	}
	return l, nil
}
