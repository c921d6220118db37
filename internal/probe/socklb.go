package probe

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/netns"
)

// trySocketLB loads a connect4 program that reads its socket's netns
// cookie (what internal/socklb filters on) and attaches it to
// cnibench's cgroup v2 as a bpf_link, then detaches it: what Cilium's
// kube-proxy replacement (kubeProxy: cilium) needs.
// Equivalent to: bpftool cgroup attach CGROUP connect4 pinned PROG
// (as a link), then detach.
func (s *scratch) trySocketLB() (bool, string) {
	if _, err := netns.Cookie(""); err != nil {
		return false, "reading a network namespace's cookie failed: " + err.Error()
	}
	dir, err := cgroup2.Own()
	if err != nil {
		return false, "no cgroup v2 to attach socket programs to: " + err.Error()
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:       "cnbprobe",
		Type:       ebpf.CGroupSockAddr,
		AttachType: ebpf.AttachCGroupInet4Connect,
		License:    "Apache-2.0",
		Instructions: asm.Instructions{
			asm.FnGetNetnsCookie.Call(), // R1 is the context
			asm.Mov.Imm(asm.R0, 1),
			asm.Return(),
		},
	})
	if err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, ebpf.ErrNotSupported) {
			return false, "loading a cgroup connect4 program that reads the netns cookie failed: " + err.Error() +
				" (bpf_get_netns_cookie in socket-address programs needs Linux 5.7, CONFIG_CGROUP_BPF)"
		}
		return false, bpfLoadFailed(err)
	}
	defer prog.Close()
	f, err := os.Open(dir)
	if err != nil {
		return false, fmt.Sprintf("opening cgroup %s: %v", dir, err)
	}
	defer f.Close()
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: int(f.Fd()), Program: prog, Attach: ebpf.AttachCGroupInet4Connect})
	if err != nil {
		return false, fmt.Sprintf("attaching a connect4 program to cgroup %s as a bpf_link failed: %v (cgroup bpf_links need Linux 5.7)", dir, err)
	}
	if err := l.Close(); err != nil {
		return false, fmt.Sprintf("detaching the probe's connect4 program from %s: %v", dir, err)
	}
	return true, ""
}
