package probe

import (
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// tryIFB checks what ingress impairments need: an ifb device, an ingress
// qdisc on the scratch veth, and a match-all u32 filter whose mirred
// action redirects to the ifb. Deleting the veth's ingress qdisc and the
// ifb removes everything again.
// Equivalent to:
//
//	ip link add cnbp-ifb type ifb
//	tc qdisc add dev cnbp-p0 handle ffff: ingress
//	tc filter add dev cnbp-p0 parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev cnbp-ifb
func (s *scratch) tryIFB() (bool, string) {
	ifb := &netlink.Ifb{LinkAttrs: attrs("cnbp-ifb")}
	if err := s.h.LinkAdd(ifb); err != nil {
		return false, failed("creating an ifb device", "ifb", err)
	}
	defer s.h.LinkDel(ifb)
	l, err := s.h.LinkByName("cnbp-ifb")
	if err != nil {
		return false, "not probed: " + err.Error()
	}
	if s.parent == nil {
		return false, "an ifb device works, but redirecting to it was not probed: needs a veth, and creating one failed (see veth)"
	}
	q := &netlink.Ingress{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: s.parent.Attrs().Index, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_INGRESS}}
	if err := s.h.QdiscAdd(q); err != nil {
		return false, "an ifb device works, but " + failed("adding an ingress qdisc", "sch_ingress", err)
	}
	defer s.h.QdiscDel(q)
	f := &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: s.parent.Attrs().Index, Parent: q.Handle, Priority: 1, Protocol: unix.ETH_P_ALL},
		Actions:     []netlink.Action{netlink.NewMirredAction(l.Attrs().Index)},
	}
	if err := s.h.FilterAdd(f); err != nil {
		return false, "an ifb device works, but " + failed("redirecting to it (u32 filter, mirred action)", "cls_u32 or act_mirred", err)
	}
	return true, ""
}
