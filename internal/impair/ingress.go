package impair

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// Ingress: netem only acts on egress, so traffic arriving on a device is
// redirected to an ifb device first and impaired on the ifb's egress:
//
//	ip link add cnbifbN type ifb; ip link set cnbifbN up
//	tc qdisc add dev cnbifbN root handle cb1: netem ...
//	tc qdisc add dev DEV handle ffff: ingress
//	tc filter add dev DEV parent ffff: protocol all prio 1 u32 match u32 0 0 action mirred egress redirect dev cnbifbN
//
// It needs the ifb module (probe.IFB), act_mirred and cls_u32. A
// device that already has an ingress or clsact qdisc (cilium's BPF
// programs, for one) is refused: the hook is not cnibench's to share.

// ingressHandle is the ingress qdisc's conventional handle ffff:.
var ingressHandle = netlink.MakeHandle(0xffff, 0)

// IFBName is the ifb device cnibench creates for ingress on the device
// with that ifindex (namespace-local, so unique there; hex keeps any
// ifindex within IFNAMSIZ).
func IFBName(ifindex int) string { return fmt.Sprintf("cnbifb%x", uint32(ifindex)) }

// ApplyIngress impairs what dev receives, through an ifb device. As
// Apply, it records the plan before changing anything; on a failure
// halfway it undoes what it did and returns the error.
func ApplyIngress(nsName, dev string, s Spec, record func(Prev) error) (Prev, error) {
	if err := s.Validate(); err != nil {
		return Prev{}, err
	}
	if s.IsZero() {
		return Prev{Netns: nsName, Dev: dev, None: true}, nil
	}
	return ingress(nsName, dev, record, func(ifb string, idx int) error {
		return addNetem(nsName, ifb, idx, netlink.HANDLE_ROOT, s)
	})
}

// ingress sets up the redirection with install putting the qdisc on the
// ifb's root.
func ingress(nsName, dev string, record func(Prev) error, install func(ifb string, idx int) error) (Prev, error) {
	h, err := netns.Handle(nsName)
	if err != nil {
		return Prev{}, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return Prev{}, fmt.Errorf("find %s in %s: %w", dev, nsOrHost(nsName), err)
	}
	qs, err := dumpQdiscs(nsName, l.Attrs().Index)
	if err != nil {
		return Prev{}, err
	}
	ifb := IFBName(l.Attrs().Index)
	for _, q := range qs {
		if q.Parent == netlink.HANDLE_INGRESS {
			_, ours := h.LinkByName(ifb)
			return Prev{}, fmt.Errorf("device %s in %s already has qdisc %s on its ingress hook%s; ingress impairment needs it for itself: %w", dev, nsOrHost(nsName), q.Kind,
				leftover(q.Kind == "ingress" && ours == nil), ErrUnrestorable)
		}
	}
	prev := Prev{Netns: nsName, Dev: dev, Kind: "ifb", Default: true, Parent: netlink.HANDLE_ROOT, IFB: ifb}
	if record != nil {
		if err := record(prev); err != nil {
			return Prev{}, fmt.Errorf("record ingress redirection of %s before netem: %w", dev, err)
		}
	}
	if err := applyIngress(h, l, ifb, install, nsName); err != nil {
		if rerr := revertIngress(prev); rerr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", rerr))
		}
		return prev, err
	}
	return prev, nil
}

func applyIngress(h *netns.NetlinkHandle, l netlink.Link, ifb string, install func(ifb string, idx int) error, nsName string) error {
	a := netlink.NewLinkAttrs()
	a.Name, a.MTU = ifb, l.Attrs().MTU
	if err := h.LinkAdd(&netlink.Ifb{LinkAttrs: a}); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) {
			err = fmt.Errorf("%w (kernel lacks the ifb module)", err)
		}
		return fmt.Errorf("ip link add %s type ifb in %s: %w", ifb, nsOrHost(nsName), err)
	}
	il, err := h.LinkByName(ifb)
	if err != nil {
		return fmt.Errorf("find %s: %w", ifb, err)
	}
	if err := h.LinkSetUp(il); err != nil {
		return fmt.Errorf("ip link set %s up: %w", ifb, err)
	}
	if err := install(ifb, il.Attrs().Index); err != nil {
		return err
	}
	q := &netlink.Ingress{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: ingressHandle, Parent: netlink.HANDLE_INGRESS}}
	if err := h.QdiscAdd(q); err != nil {
		return fmt.Errorf("tc qdisc add dev %s ingress: %w", l.Attrs().Name, err)
	}
	// u32 with no selector (match u32 0 0) matches everything; it is in
	// kernels that lack cls_matchall (this machine's, for one).
	f := &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: l.Attrs().Index, Parent: ingressHandle, Priority: 1, Protocol: unix.ETH_P_ALL},
		Actions:     []netlink.Action{netlink.NewMirredAction(il.Attrs().Index)},
	}
	if err := h.FilterAdd(f); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) {
			err = fmt.Errorf("%w (kernel lacks cls_u32 or act_mirred)", err)
		}
		return fmt.Errorf("tc filter add dev %s parent ffff: protocol all prio 1 u32 match u32 0 0 action mirred egress redirect dev %s: %w", l.Attrs().Name, ifb, err)
	}
	return nil
}

// revertIngress deletes the ingress qdisc (its filter goes with it) and
// the ifb device (its netem goes with it); what is gone already is fine.
func revertIngress(p Prev) error {
	h, err := netns.Handle(p.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	var errs []error
	if l, err := h.LinkByName(p.Dev); err == nil {
		qs, err := dumpQdiscs(p.Netns, l.Attrs().Index)
		if err != nil {
			errs = append(errs, err)
		}
		for _, q := range qs {
			if q.Parent == netlink.HANDLE_INGRESS && q.Kind == "ingress" && q.Handle == ingressHandle {
				// Equivalent to: tc qdisc del dev DEV ingress
				qd := &netlink.Ingress{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: ingressHandle, Parent: netlink.HANDLE_INGRESS}}
				if err := h.QdiscDel(qd); err != nil {
					errs = append(errs, fmt.Errorf("tc qdisc del dev %s ingress: %w", p.Dev, err))
				}
			}
		}
	}
	if il, err := h.LinkByName(p.IFB); err == nil {
		if err := h.LinkDel(il); err != nil {
			errs = append(errs, fmt.Errorf("ip link del %s: %w", p.IFB, err))
		}
	}
	return errors.Join(errs...)
}
