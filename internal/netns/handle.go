package netns

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// NetlinkHandle is a netlink socket bound to one namespace.
type NetlinkHandle struct {
	*netlink.Handle
	ns netns.NsHandle
}

func newHandle(name string) (*NetlinkHandle, error) {
	if name == "" {
		h, err := netlink.NewHandle()
		if err != nil {
			return nil, fmt.Errorf("netlink handle: %w", err)
		}
		return &NetlinkHandle{Handle: h, ns: netns.None()}, nil
	}
	ns, err := netns.GetFromPath(Path(name))
	if err != nil {
		return nil, fmt.Errorf("open netns %s: %w", name, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("netlink handle in %s: %w", name, err)
	}
	return &NetlinkHandle{Handle: h, ns: ns}, nil
}

// NsFd returns the namespace's file descriptor, for moving links into it
// (ip link set DEV netns NAME); -1 for the host.
func (h *NetlinkHandle) NsFd() int { return int(h.ns) }

// Close releases the socket and the namespace reference.
func (h *NetlinkHandle) Close() {
	h.Handle.Close()
	if h.ns.IsOpen() {
		h.ns.Close()
	}
}

// dumpTries bounds Dump's retries; a namespace changing that fast for
// that long is itself worth an error.
const dumpTries = 5

// Dump runs a netlink dump (list) until the kernel completes one that did
// not race a change. A dump that overlapped a change of what it lists
// comes back flagged NLM_F_DUMP_INTR, and the library then returns
// netlink.ErrDumpInterrupted with partial results; polling a table that
// a daemon is writing (BIRD, flanneld) or one the kernel is still
// settling hits this now and then.
func Dump[T any](list func() (T, error)) (T, error) {
	var v T
	var err error
	for range dumpTries {
		if v, err = list(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return v, err
		}
	}
	return v, fmt.Errorf("%w (%d tries)", err, dumpTries)
}
