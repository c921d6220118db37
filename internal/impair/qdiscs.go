package impair

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// Reading qdiscs back from the kernel: dumps, netem's counters, tbf's
// limit and rate, and the names of handles and namespaces for messages.

// Stats are a qdisc's own counters: proof an impairment acted.
type Stats struct {
	Bytes, Packets              uint64
	Drops, Requeues, Overlimits uint32
	Backlog, Qlen               uint32
}

// QdiscStats reads the counters of cnibench's netem on dev (for ingress:
// Prev.Device()). Equivalent to: tc -s qdisc show dev DEV
func QdiscStats(nsName, dev string) (Stats, error) {
	h, err := netns.Handle(nsName)
	if err != nil {
		return Stats{}, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return Stats{}, fmt.Errorf("find %s in %s: %w", dev, nsOrHost(nsName), err)
	}
	qs, err := netns.Dump(func() ([]netlink.Qdisc, error) { return h.QdiscList(l) })
	if err != nil {
		return Stats{}, fmt.Errorf("tc qdisc show dev %s: %w", dev, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Handle != NetemHandle || q.Type() != netemKind {
			continue
		}
		var s Stats
		if st := a.Statistics; st != nil {
			if st.Basic != nil {
				s.Bytes, s.Packets = st.Basic.Bytes, uint64(st.Basic.Packets)
			}
			if st.Queue != nil {
				s.Drops, s.Requeues, s.Overlimits = st.Queue.Drops, st.Queue.Requeues, st.Queue.Overlimits
				s.Backlog, s.Qlen = st.Queue.Backlog, st.Queue.Qlen
			}
		}
		return s, nil
	}
	return Stats{}, fmt.Errorf("no cnibench netem (cb1:) on %s in %s", dev, nsOrHost(nsName))
}

var errNoDevice = errors.New("no such device")

func ifindex(nsName, dev string) (int, error) {
	a, err := linkAttrs(nsName, dev)
	if err != nil {
		return 0, err
	}
	return a.Index, nil
}

// linkAttrs are dev's attributes in nsName (index, MTU); a missing device
// is errNoDevice.
func linkAttrs(nsName, dev string) (*netlink.LinkAttrs, error) {
	h, err := netns.Handle(nsName)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("device %s in %s: %w", dev, nsOrHost(nsName), errNoDevice)
		}
		return nil, fmt.Errorf("find %s in %s: %w", dev, nsOrHost(nsName), err)
	}
	return l.Attrs(), nil
}

// dumpQdiscs lists dev's qdiscs with raw options.
// Equivalent to: tc -n NS qdisc show dev DEV
func dumpQdiscs(nsName string, idx int) ([]qdisc, error) {
	var out []qdisc
	err := netns.Do(nsName, func() error {
		msgs, err := netns.Dump(func() ([][]byte, error) {
			req := nl.NewNetlinkRequest(unix.RTM_GETQDISC, unix.NLM_F_DUMP)
			req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(idx)})
			return req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWQDISC)
		})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if len(m) < nl.SizeofTcMsg {
				continue
			}
			tm := nl.DeserializeTcMsg(m)
			if int(tm.Ifindex) != idx {
				continue
			}
			attrs, err := parseAttrs(m[tm.Len():])
			if err != nil {
				return err
			}
			q := qdisc{Handle: tm.Handle, Parent: tm.Parent}
			for _, a := range attrs {
				switch a.Type {
				case nl.TCA_KIND:
					q.Kind = strings.TrimRight(string(a.Value), "\x00")
				case nl.TCA_OPTIONS:
					q.Options = a.Value
				}
			}
			out = append(out, q)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tc qdisc show (ifindex %d) in %s: %w", idx, nsOrHost(nsName), err)
	}
	return out, nil
}

// tcRequest sends one qdisc request inside the namespace.
func tcRequest(nsName string, msgType, flags, idx int, handle, parent uint32, kind string, opts *nl.RtAttr) error {
	return netns.Do(nsName, func() error {
		req := nl.NewNetlinkRequest(msgType, flags|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(idx), Handle: handle, Parent: parent})
		if kind != "" {
			req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated(kind)))
		}
		if opts != nil {
			req.AddData(opts)
		}
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
}

// tbfLimitRate reads tbf's queue limit (bytes) and rate (bytes/s) from
// its TCA_OPTIONS.
func tbfLimitRate(opts []byte) (limit uint32, rate uint64, err error) {
	attrs, err := parseAttrs(opts)
	if err != nil {
		return 0, 0, fmt.Errorf("tbf options: %w", err)
	}
	found := false
	for _, a := range attrs {
		switch {
		case a.Type == nl.TCA_TBF_PARMS && len(a.Value) >= nl.SizeofTcTbfQopt:
			q := nl.DeserializeTcTbfQopt(a.Value)
			limit, rate, found = q.Limit, max(rate, uint64(q.Rate.Rate)), true
		case a.Type == nl.TCA_TBF_RATE64 && len(a.Value) >= 8:
			// Rates of 2^32 bytes/s and above; the parms' rate is then
			// saturated (wire/shape.go).
			rate = max(rate, binary.NativeEndian.Uint64(a.Value))
		}
	}
	if !found {
		return 0, 0, errors.New("tbf options without TCA_TBF_PARMS")
	}
	return limit, rate, nil
}

// explain names the module when the kernel does not know netem.
func explain(err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("%w (kernel lacks the sch_netem module)", err)
	}
	return err
}

func handleString(h uint32) string {
	if h == netlink.HANDLE_ROOT {
		return "root"
	}
	if h&0xffff == 0 {
		return fmt.Sprintf("%x:", h>>16)
	}
	return fmt.Sprintf("%x:%x", h>>16, h&0xffff)
}

func parentString(p uint32) string {
	if p == netlink.HANDLE_ROOT {
		return "root"
	}
	return "parent " + handleString(p)
}

func nsOrHost(ns string) string {
	if ns == "" {
		return "the host namespace"
	}
	return "netns " + ns
}
