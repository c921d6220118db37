// Package socklb is Cilium's kube-proxy replacement as cnibench models
// it: ClusterIP Services translated to a backend at the socket, by BPF
// programs on a cgroup's connect4/sendmsg4 hooks, shown back as the
// Service by recvmsg4/getpeername4 (bpf/socklb.c, after cilium/cilium
// bpf/bpf_sock.c). No packet carries a ClusterIP, so the Service path
// costs no netfilter rule, conntrack entry or per-packet NAT.
//
// Design notes:
//   - The programs attach as bpf_links to cnibench's own cgroup (its
//     children, the pods' processes, inherit it). A link lives as long as
//     its file descriptor: if cnibench dies, the kernel detaches the
//     programs and frees the maps, so a crash leaves nothing behind and
//     no journal record is needed. Kernels without cgroup bpf_links
//     (before 5.7) are refused rather than attached the old, persistent way.
//   - Only sockets of the namespaces passed to Serve are translated
//     (their netns cookies); other processes in the cgroup, and the host,
//     are untouched.
package socklb

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/cnibench/cnibench/internal/lbmap"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
)

// LB is the loaded, attached socket load balancer.
type LB struct {
	objs   bpfObjects
	links  []link.Link
	cgroup string
	table  lbmap.Table
}

// hooks maps each cgroup hook to the program attached there.
func (o *bpfObjects) hooks() map[ebpf.AttachType]*ebpf.Program {
	return map[ebpf.AttachType]*ebpf.Program{
		ebpf.AttachCGroupInet4Connect:     o.Sock4Connect,
		ebpf.AttachCGroupUDP4Sendmsg:      o.Sock4Sendmsg,
		ebpf.AttachCGroupUDP4Recvmsg:      o.Sock4Recvmsg,
		ebpf.AttachCgroupInet4GetPeername: o.Sock4Getpeername,
	}
}

// Attach loads the programs and attaches them to the cgroup directory
// cgroup (a cgroup v2 path).
func Attach(cgroup string) (*LB, error) {
	lb := &LB{cgroup: cgroup}
	if err := loadBpfObjects(&lb.objs, nil); err != nil {
		return nil, fmt.Errorf("loading the socket-LB programs: %w", err)
	}
	lb.table = lbmap.Table{Services: lb.objs.Lb4Services, Backends: lb.objs.Lb4Backends}
	dir, err := os.Open(cgroup)
	if err != nil {
		lb.objs.Close()
		return nil, fmt.Errorf("opening cgroup %s: %w", cgroup, err)
	}
	defer dir.Close()
	for attach, prog := range lb.objs.hooks() {
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: int(dir.Fd()), Program: prog, Attach: attach})
		if err != nil {
			lb.Close()
			return nil, fmt.Errorf("attaching %s to cgroup %s as a bpf_link (Linux 5.7): %w", attach, cgroup, err)
		}
		lb.links = append(lb.links, l)
	}
	return lb, nil
}

// Cgroup is where the programs are attached.
func (lb *LB) Cgroup() string { return lb.cgroup }

// Close detaches the programs and frees the maps.
func (lb *LB) Close() error {
	var errs []error
	for _, l := range lb.links {
		errs = append(errs, l.Close())
	}
	lb.links = nil
	errs = append(errs, lb.objs.Close())
	return errors.Join(errs...)
}

// Serve has the sockets of namespace ref translated from now on.
func (lb *LB) Serve(ref string) error {
	c, err := netns.Cookie(ref)
	if err != nil {
		return err
	}
	if err := lb.objs.Netns.Put(c, uint8(1)); err != nil {
		return fmt.Errorf("socket-LB: serving netns %s: %w", ref, err)
	}
	return nil
}

// Set makes svcs the Services the programs translate, replacing what
// the last Set wrote. Endpoints are selected at random per TCP
// connection and by socket for UDP, as Cilium does.
func (lb *LB) Set(svcs []netfilter.Service) error {
	if err := lb.table.Set(svcs); err != nil {
		return fmt.Errorf("socket-LB: %w", err)
	}
	return nil
}

// Stats are the programs' counters, summed over CPUs.
type Stats struct {
	// Translated counts connects (and unconnected UDP sends) sent to a
	// backend; Reversed the peers shown back as their Service.
	Translated, Reversed uint64
	// NoBackend counts connects and sends refused because their Service
	// had no usable backend; RevNATFailed those refused because their
	// reverse-NAT entry could not be written (Cilium refuses both:
	// bpf/bpf_sock.c cil_sock4_connect, cil_sock4_sendmsg).
	NoBackend, RevNATFailed uint64
	// Stale counts reverse-NAT entries dropped, untranslated, because
	// their Service is gone, was made again (another reverse-NAT index)
	// or has no backend left. Not among Counts: a Service changes only
	// between trials.
	Stale uint64
}

// Counts implements engine.Counter: Stats as
// socklb_{translated,reversed,nobackend,revnat_failed}_count.
func (lb *LB) Counts() (map[string]uint64, error) {
	s, err := lb.Stats()
	if err != nil {
		return nil, err
	}
	return map[string]uint64{"socklb_translated_count": s.Translated, "socklb_reversed_count": s.Reversed,
		"socklb_nobackend_count": s.NoBackend, "socklb_revnat_failed_count": s.RevNATFailed}, nil
}

// Stats reads the counters.
func (lb *LB) Stats() (Stats, error) {
	var out Stats
	// In bpf/socklb.c's counter order.
	for i, dst := range []*uint64{&out.Translated, &out.Reversed, &out.NoBackend, &out.RevNATFailed, &out.Stale} {
		var per []uint64
		if err := lb.objs.Counters.Lookup(uint32(i), &per); err != nil {
			return Stats{}, fmt.Errorf("socket-LB: reading counter %d: %w", i, err)
		}
		for _, v := range per {
			*dst += v
		}
	}
	return out, nil
}

// Attached counts the programs of this package's connect4 hook attached
// to cgroup (by program name: every socklb.LB adds one): what tests and
// leak checks compare before and after.
func Attached(cgroup string) (int, error) {
	f, err := os.Open(cgroup)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	q, err := link.QueryPrograms(link.QueryOptions{Target: int(f.Fd()), Attach: ebpf.AttachCGroupInet4Connect})
	if err != nil {
		return 0, fmt.Errorf("querying the connect4 programs of %s: %w", cgroup, err)
	}
	n := 0
	for _, p := range q.Programs {
		prog, err := ebpf.NewProgramFromID(p.ID)
		if err != nil {
			continue // detached and freed meanwhile
		}
		info, err := prog.Info()
		prog.Close()
		if err == nil && info.Name == progName {
			n++
		}
	}
	return n, nil
}

// progName is the kernel's (truncated to 15 bytes) name of the connect4 program.
const progName = "sock4_connect"
