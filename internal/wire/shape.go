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
// packet, so goodput at line rate matches a real NIC of that speed.
const FramingOverhead = 24

// ShapeHandle is the handle of the shaper's root tbf qdisc. internal/impair
// puts netem under it as tbf's inner queue (class 1:1), so an impaired
// underlay is still shaped.
var ShapeHandle = netlink.MakeHandle(1, 0)

// ShapeTBF limits egress of dev in namespace ns to rate bits/s of wire
// time with a token bucket, charging FramingOverhead bytes per packet in
// the kernel (tc_ratespec.overhead, linklayer ethernet) rather than by
// lowering the rate, which could only be right for one packet size.
// Equivalent to:
//
//	tc -n NS qdisc add dev DEV root handle 1: tbf rate RATE burst BURST limit LIMIT overhead 24 linklayer ethernet
//
// (vishvananda/netlink's Tbf has no overhead field, so the request is
// built here.) Burst is 4 ms of traffic (at least four full frames): the
// long-run rate is exact whatever the burst, and a bucket smaller than
// the shaper's timer latency on a busy machine loses tokens, i.e. line
// rate. The queue holds 20 ms beyond the burst, like a NIC ring.
func ShapeTBF(ns, dev string, rate uint64) error {
	bytesPerSec := rate / 8
	if bytesPerSec == 0 {
		return fmt.Errorf("link rate %d bit/s is too low", rate)
	}
	burst := max(bytesPerSec/250, 4*1600)
	limit := burst + bytesPerSec/50
	if limit > math.MaxUint32 || burst > math.MaxUint32 {
		return fmt.Errorf("link rate %d bit/s is too high for tbf", rate)
	}
	var opt nl.TcTbfQopt
	opt.Rate.Rate = uint32(min(bytesPerSec, math.MaxUint32))
	opt.Rate.Overhead = FramingOverhead
	opt.Rate.Linklayer = 1 // TC_LINKLAYER_ETHERNET
	opt.Limit = uint32(limit)
	// Buffer is in psched ticks (64 ns); TCA_TBF_BURST below takes
	// precedence in the kernel, this is for older kernels.
	opt.Buffer = uint32(min(burst*1_000_000_000/bytesPerSec/64, math.MaxUint32))
	ifindex, err := linkIndex(ns, dev)
	if err != nil {
		return err
	}
	return netns.Do(ns, func() error {
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: ShapeHandle, Parent: netlink.HANDLE_ROOT})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
		options := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
		options.AddRtAttr(nl.TCA_TBF_PARMS, opt.Serialize())
		if bytesPerSec >= 1<<32 {
			options.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(bytesPerSec))
		}
		options.AddRtAttr(nl.TCA_TBF_BURST, nl.Uint32Attr(uint32(burst)))
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

// linkIndex is dev's index in namespace ns.
func linkIndex(ns, dev string) (int, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return 0, fmt.Errorf("find %s in %s: %w", dev, ns, err)
	}
	return l.Attrs().Index, nil
}
