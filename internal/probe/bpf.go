package probe

import (
	"errors"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// tryClsBPF attaches a trivial tc BPF program (return 0) in direct-action
// mode to the ingress hook of the parent veth, then removes it all. This
// is what an eBPF datapath in the style of Cilium does on every pod veth.
// Equivalent to: tc qdisc add dev cnbp-p0 clsact;
// tc filter add dev cnbp-p0 ingress bpf direct-action obj PROG;
// tc qdisc del dev cnbp-p0 clsact
func (s *scratch) tryClsBPF() (bool, string) {
	if s.parent == nil {
		return false, "not probed: needs a veth device to attach to, and creating one failed (see veth)"
	}
	idx := s.parent.Attrs().Index
	clsact := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}
	if err := s.h.QdiscAdd(clsact); err != nil {
		return false, failed("adding a clsact qdisc (where tc BPF programs attach)", "sch_ingress", err)
	}
	defer s.h.QdiscDel(clsact)

	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "cnbprobe",
		Type:         ebpf.SchedCLS,
		License:      "Apache-2.0",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		return false, bpfLoadFailed(err)
	}
	defer prog.Close()

	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: idx,
			Parent:    netlink.HANDLE_MIN_INGRESS,
			Handle:    netlink.MakeHandle(0, 1),
			Protocol:  unix.ETH_P_ALL,
			Priority:  1,
		},
		Fd:           prog.FD(),
		Name:         "cnbprobe",
		DirectAction: true,
	}
	if err := s.h.FilterAdd(f); err != nil {
		return false, failed("attaching a BPF program as a tc filter", "cls_bpf", err)
	}
	if err := s.h.FilterDel(f); err != nil {
		return false, failed("removing the tc BPF filter", "cls_bpf", err)
	}
	return true, ""
}

// bpfLoadFailed separates privilege problems, which look like missing
// features, from a kernel without BPF.
func bpfLoadFailed(err error) string {
	const what = "loading a tc BPF program failed: "
	msg := err.Error()
	switch {
	case strings.Contains(msg, "MEMLOCK"):
		return what + msg + " (the locked-memory limit is too low: raise ulimit -l; kernels before 5.11 charge BPF memory to it)"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return what + msg + " (a privilege issue, not a missing feature: needs root, or CAP_BPF with CAP_NET_ADMIN; kernel lockdown or a security module may also forbid BPF)"
	case errors.Is(err, unix.ENOSYS):
		return what + msg + " (this kernel was built without the bpf() system call, CONFIG_BPF_SYSCALL)"
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, unix.EINVAL):
		return what + msg + " (this kernel does not support tc BPF programs, CONFIG_NET_CLS_BPF / CONFIG_NET_CLS_ACT)"
	}
	return what + reason("cls_bpf", err)
}
