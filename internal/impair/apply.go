package impair

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// Where netem goes, and how it is undone (the kernel side):
//
//   - A device with the kernel's default root qdisc (handle 0: noqueue on
//     veth, VXLAN and other virtual devices; pfifo_fast or fq_codel,
//     whatever net.core.default_qdisc says, or mq on real multiqueue
//     NICs and tun): netem becomes the root; revert deletes it and the
//     kernel attaches its default again, exactly as before.
//   - A device shaped by the local engine's link-rate tbf (the underlay,
//     `tbf ... overhead 24`): netem becomes tbf's inner queue (parent
//     MAJOR:1), so the shaper is untouched and packets are impaired, then
//     shaped. Revert grafts back a bfifo with tbf's own limit, which is
//     what tbf creates for itself; the one visible difference is that
//     the restored bfifo has a handle (cb2:) and shows in `tc qdisc
//     show`, where tbf's own is hidden (userspace cannot create a hidden
//     one; recreating tbf would round its bucket to 64 ns ticks). A later
//     Apply finds that bfifo and its revert restores it as it was.
//   - Any other root qdisc (htb, a netem, fq with options...) is refused:
//     cnibench will not replace what it cannot put back.
//
// The paper applies netem on the client's flannel interface (flannel.1,
// flannel0), which has no shaper: the first case.

// Handles of the qdiscs cnibench adds, so a read-back or a revert after
// a crash finds its own.
var (
	NetemHandle   = netlink.MakeHandle(0xcb1, 0)
	RestoreHandle = netlink.MakeHandle(0xcb2, 0)
)

// Prev is what Apply found on the device and how Revert undoes Apply.
// It is plain data, written to the journal before anything changes.
type Prev struct {
	Netns string `json:"netns"`
	Dev   string `json:"dev"`
	// None: the Spec impaired nothing and nothing was installed.
	None bool `json:"none,omitempty"`
	// Kind and Handle of the root qdisc found (noqueue, fq_codel, tbf...).
	Kind   string `json:"kind,omitempty"`
	Handle uint32 `json:"handle,omitempty"`
	// Default: the root was the kernel's own (handle 0:); deleting the
	// netem root restores it.
	Default bool `json:"default,omitempty"`
	// Parent is where the netem was added: the root, or tbf's class.
	Parent uint32 `json:"parent"`
	// Child is tbf's inner queue the netem replaced.
	Child *Child `json:"child,omitempty"`
	// ShaperRate is that tbf's rate in bytes/s (with Child): netem's
	// queue, in the bfifo's place, is sized by it (shaperLimit).
	ShaperRate uint64 `json:"shaper_rate,omitempty"`
	// Limit is the netem queue length, in packets, cnibench set there
	// because the Spec gave none (shaperLimit); 0: the Spec's own, or
	// tc's default (Installed).
	Limit uint32 `json:"limit,omitempty"`
	// IFB is set for ingress: Dev got an ingress qdisc whose filter
	// redirects every packet to this ifb device, and the netem is the
	// ifb's root qdisc.
	IFB string `json:"ifb,omitempty"`
}

// Child is a classful root's inner queue.
type Child struct {
	Kind string `json:"kind"`
	// Handle 0 is tbf's own hidden default queue.
	Handle uint32 `json:"handle,omitempty"`
	// Limit in bytes.
	Limit uint32 `json:"limit"`
}

// Device is where the netem is: Dev, or the ifb for ingress.
func (p Prev) Device() string {
	if p.IFB != "" {
		return p.IFB
	}
	return p.Dev
}

// ErrUnrestorable is wrapped when a device's qdiscs are ones cnibench
// would not be able to put back exactly.
var ErrUnrestorable = errors.New("cannot restore the device's qdisc exactly")

// qdisc is one qdisc as the kernel dumps it, options undecoded (the
// netlink library drops netem's and tbf's fields cnibench needs).
type qdisc struct {
	Kind           string
	Handle, Parent uint32
	Options        []byte
}

// Inspect reads dev's qdiscs and decides where a netem would go, changing
// nothing. Equivalent to: tc -n NS qdisc show dev DEV
func Inspect(nsName, dev string) (Prev, error) {
	idx, err := ifindex(nsName, dev)
	if err != nil {
		return Prev{}, err
	}
	qs, err := dumpQdiscs(nsName, idx)
	if err != nil {
		return Prev{}, err
	}
	return inspect(nsName, dev, qs)
}

func inspect(nsName, dev string, qs []qdisc) (Prev, error) {
	p := Prev{Netns: nsName, Dev: dev, Parent: netlink.HANDLE_ROOT}
	var root *qdisc
	for i := range qs {
		if qs[i].Parent == netlink.HANDLE_ROOT {
			root = &qs[i]
		}
	}
	where := fmt.Sprintf("device %s in %s", dev, nsOrHost(nsName))
	if root == nil {
		// A device that has never been up has no root qdisc in dumps.
		p.Kind, p.Default = "none", true
		return p, nil
	}
	p.Kind, p.Handle = root.Kind, root.Handle
	switch {
	case root.Kind == "netem":
		// Only cnibench's handle points at cleanup: a netem of the user's
		// own (another handle) is no journal's, and cleanup leaves it.
		if root.Handle != NetemHandle {
			return Prev{}, fmt.Errorf("%s already has a netem root qdisc %s, not cnibench's; remove it or impair another device: %w", where, handleString(root.Handle), ErrUnrestorable)
		}
		return Prev{}, fmt.Errorf("%s already has a netem root qdisc %s%s: %w", where, handleString(root.Handle), leftover(true), ErrUnrestorable)
	case root.Handle == 0:
		// The kernel's default root (mq on a multiqueue NIC) comes back
		// by itself when the netem goes, with default children (handle
		// 0:). A child with a handle was set by someone (tc qdisc replace
		// parent :1 fq): it would come back as the default, its settings
		// lost, so it is refused like any root cnibench cannot restore.
		for _, q := range qs {
			if q.Parent != netlink.HANDLE_ROOT && q.Parent != netlink.HANDLE_INGRESS && q.Parent>>16 == 0 && q.Handle != 0 {
				return Prev{}, fmt.Errorf("%s: its default root %s has a %s child %s set on queue %s, which cnibench cannot restore after netem; remove it or impair another device: %w",
					where, root.Kind, q.Kind, handleString(q.Handle), handleString(q.Parent), ErrUnrestorable)
			}
		}
		p.Default = true
		return p, nil
	case root.Kind == "tbf":
		limit, rate, err := tbfLimitRate(root.Options)
		if err != nil {
			return Prev{}, fmt.Errorf("%s: %w", where, err)
		}
		p.ShaperRate = rate
		p.Parent = netlink.MakeHandle(uint16(root.Handle>>16), 1)
		p.Child = &Child{Kind: "bfifo", Limit: limit}
		for _, q := range qs {
			if q.Parent != p.Parent {
				continue
			}
			if q.Kind != "bfifo" || len(q.Options) < 4 {
				return Prev{}, fmt.Errorf("%s: tbf %s has a %s child %s, which cnibench does not restore%s: %w", where, handleString(root.Handle), q.Kind, handleString(q.Handle),
					leftover(q.Kind == "netem" && q.Handle == NetemHandle), ErrUnrestorable)
			}
			p.Child.Handle, p.Child.Limit = q.Handle, binary.NativeEndian.Uint32(q.Options)
		}
		return p, nil
	}
	return Prev{}, fmt.Errorf("%s has root qdisc %s %s, which cnibench cannot restore exactly after netem; remove it or impair another device: %w", where, root.Kind, handleString(root.Handle), ErrUnrestorable)
}

// Apply installs s on dev's egress. It inspects the device first, hands
// the finding to record (the caller journals it; nil skips) and changes
// nothing if record fails. A zero Spec installs nothing (Prev.None).
// Equivalent to: tc -n NS qdisc add dev DEV {root | parent MAJOR:1} handle cb1: netem ...
func Apply(nsName, dev string, s Spec, record func(Prev) error) (Prev, error) {
	if err := s.Validate(); err != nil {
		return Prev{}, err
	}
	if s.IsZero() {
		return Prev{Netns: nsName, Dev: dev, None: true}, nil
	}
	prev, err := Inspect(nsName, dev)
	if err != nil {
		return Prev{}, err
	}
	link, err := linkAttrs(nsName, dev)
	if err != nil {
		return Prev{}, err
	}
	if prev.Child != nil && s.Limit == 0 {
		prev.Limit = shaperLimit(s, prev.Child.Limit, prev.ShaperRate, link.MTU)
	}
	if record != nil {
		if err := record(prev); err != nil {
			return Prev{}, fmt.Errorf("record qdisc of %s before netem: %w", dev, err)
		}
	}
	return prev, addNetem(nsName, dev, link.Index, prev.Parent, prev.Installed(s))
}

// Installed is s as Apply installs it where it found p: with the queue
// limit cnibench set under a shaper (p.Limit), else s's own or tc's
// default (DefaultLimit), so that its String says the queue netem has.
// A Spec that impairs nothing is none wherever it goes.
func (p Prev) Installed(s Spec) Spec {
	switch {
	case s.IsZero() || p.None:
		return s
	case p.Limit != 0:
		s.Limit = p.Limit
	case s.Limit == 0:
		s.Limit = DefaultLimit
	}
	return s
}

// shaperLimit is netem's queue length, in packets, where it takes the
// place of a link shaper's (tbf's) bfifo of bfifoBytes and no limit was
// given: the packets netem holds for the delay (the shaper's rate, bytes/s,
// times delay + jitter) and the shaper's queue the bfifo held, each in
// full-size frames (the device's MTU and Ethernet header). tc's 1000
// would hold both: at delay-low (11 ms) on 1 Gbit/s some 900 packets are
// in flight for the delay alone, leaving the shaper about 100 of the
// 3 MB (24 ms) its bfifo had.
func shaperLimit(s Spec, bfifoBytes uint32, rate uint64, mtu int) uint32 {
	frame := float64(mtu + ethHeader)
	held := float64(rate) * (s.Delay + s.Jitter).Seconds()
	n := math.Ceil(float64(bfifoBytes)/frame) + math.Ceil(held/frame)
	return uint32(min(n, math.MaxUint32))
}

// ethHeader is the Ethernet header a packet on the shaped device carries
// in the bytes tbf and its bfifo count (destination MAC to payload).
const ethHeader = 14

func addNetem(nsName, dev string, idx int, parent uint32, s Spec) error {
	opts, err := s.options()
	if err != nil {
		return err
	}
	if err := addQdisc(nsName, idx, parent, netemKind, opts); err != nil {
		return fmt.Errorf("tc qdisc add dev %s %s handle cb1: netem %s in %s: %w", dev, parentString(parent), s, nsOrHost(nsName), explain(err))
	}
	return nil
}

// netemKind is the kind Revert and ReadBack look for at NetemHandle; the
// kernel tests that run without netem put a stand-in there instead, to
// exercise everything around it.
var netemKind = "netem"

// addQdisc adds cnibench's qdisc at NetemHandle under parent. REPLACE
// lets it take the place of a visible inner bfifo a previous revert left
// under tbf; EXCL refuses a second one.
func addQdisc(nsName string, idx int, parent uint32, kind string, opts *nl.RtAttr) error {
	flags := unix.NLM_F_CREATE | unix.NLM_F_EXCL | unix.NLM_F_REPLACE
	return tcRequest(nsName, unix.RTM_NEWQDISC, flags, idx, NetemHandle, parent, kind, opts)
}

// Revert undoes Apply from its Prev. It is idempotent, as cleanup after a
// crash needs: what is already as before (or gone with its namespace or
// device) is success.
func Revert(p Prev) error {
	if p.None || (p.Netns != "" && !netns.Exists(p.Netns)) {
		return nil
	}
	if p.IFB != "" {
		return revertIngress(p)
	}
	idx, err := ifindex(p.Netns, p.Dev)
	if errors.Is(err, errNoDevice) {
		return nil
	}
	if err != nil {
		return err
	}
	qs, err := dumpQdiscs(p.Netns, idx)
	if err != nil {
		return err
	}
	var ours *qdisc
	for i := range qs {
		if qs[i].Handle == NetemHandle && qs[i].Kind == netemKind {
			ours = &qs[i]
		}
	}
	if ours == nil {
		return nil // never installed, or already reverted
	}
	if ours.Parent != p.Parent {
		return fmt.Errorf("revert netem on %s: it sits at %s, not %s as recorded", p.Dev, parentString(ours.Parent), parentString(p.Parent))
	}
	if p.Child == nil {
		// Equivalent to: tc qdisc del dev DEV root handle cb1:
		if err := tcRequest(p.Netns, unix.RTM_DELQDISC, 0, idx, NetemHandle, p.Parent, "", nil); err != nil {
			return fmt.Errorf("tc qdisc del dev %s root handle cb1: in %s: %w", p.Dev, nsOrHost(p.Netns), err)
		}
		return nil
	}
	// Equivalent to: tc qdisc replace dev DEV parent MAJOR:1 handle H bfifo limit L
	h := p.Child.Handle
	if h == 0 {
		h = RestoreHandle
	}
	opts := nl.NewRtAttr(nl.TCA_OPTIONS, u32s(p.Child.Limit))
	if err := tcRequest(p.Netns, unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, idx, h, p.Parent, "bfifo", opts); err != nil {
		return fmt.Errorf("tc qdisc replace dev %s %s handle %s bfifo limit %d in %s: %w", p.Dev, parentString(p.Parent), handleString(h), p.Child.Limit, nsOrHost(p.Netns), err)
	}
	return nil
}

// ReadBack returns the netem installed on dev (cnibench's, else any), as
// the kernel reports it. The distribution is always Uniform: the kernel
// does not report the table.
func ReadBack(nsName, dev string) (Spec, error) {
	q, err := findNetem(nsName, dev)
	if err != nil {
		return Spec{}, err
	}
	k, err := decode(q.Options)
	if err != nil {
		return Spec{}, fmt.Errorf("netem on %s: %w", dev, err)
	}
	return k.Spec(), nil
}

func findNetem(nsName, dev string) (qdisc, error) {
	idx, err := ifindex(nsName, dev)
	if err != nil {
		return qdisc{}, err
	}
	qs, err := dumpQdiscs(nsName, idx)
	if err != nil {
		return qdisc{}, err
	}
	var found []qdisc
	for _, q := range qs {
		if q.Kind == netemKind {
			if q.Handle == NetemHandle {
				return q, nil
			}
			found = append(found, q)
		}
	}
	if len(found) == 0 {
		return qdisc{}, fmt.Errorf("no netem qdisc on %s in %s", dev, nsOrHost(nsName))
	}
	return found[0], nil
}

// leftover is what a refusal adds when the qdisc in the way looks like
// cnibench's own (its netem handle, its ifb): a crashed run's, which
// cleanup removes.
func leftover(ours bool) string {
	if !ours {
		return ""
	}
	return " (left by a crashed run? `cnibench cleanup`)"
}
