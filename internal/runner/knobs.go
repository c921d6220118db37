package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/policy"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Knobs of a study's datapath entry that act on the emulated nodes after
// they are built: offloads on the underlay NIC and tunnel device, and the
// network-policy rule set. Both live inside the run's node namespaces, so
// deleting the namespaces undoes them; nothing here touches the host.

// applyOffloads sets the entry's offloads on every node's underlay and
// tunnel device. A device that cannot change a feature (a VXLAN device's
// fixed tunnel segmentation) is noted, not fatal; a feature no device
// could take is an error naming what ethtool said.
func applyOffloads(ctx context.Context, c engine.Cluster, sd study.Datapath) ([]string, error) {
	var done []string
	for _, f := range sd.OffloadNames() {
		on := sd.OffloadOn(f)
		var ok, failed []string
		for _, n := range []engine.Node{c.Server(), c.Client()} {
			devs := []netns.Iface{n.Underlay()}
			if t, has := n.Tunnel(); has {
				devs = append(devs, t)
			}
			for _, d := range devs {
				where := n.Name() + "/" + d.Name
				if err := offload.Set(ctx, n, d.Name, f, on); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", where, err))
					continue
				}
				ok = append(ok, where)
			}
		}
		if len(ok) == 0 {
			return nil, fmt.Errorf("datapath %s: offload %s %s: no device took it (%s)", sd.Name, f, sd.Offloads[f], strings.Join(failed, "; "))
		}
		done = append(done, fmt.Sprintf("%s %s on %s", f, sd.Offloads[f], strings.Join(ok, ", ")))
		for _, m := range failed {
			done = append(done, fmt.Sprintf("%s %s not set on %s", f, sd.Offloads[f], m))
		}
	}
	return done, nil
}

// policyState is what the runner keeps between pod-count changes of one
// datapath: the rule set is rewritten whenever pods come or go, as Felix
// reprograms endpoints, and the FORWARD hook is added once per node.
type policyState struct {
	hooked map[string]bool
	env    *results.PolicyEnv
}

// applyPolicy (re)writes the entry's Calico-style rule set on both nodes
// for the pods that exist now.
func (r *run) applyPolicy(ctx context.Context, c engine.Cluster, sd study.Datapath, st *policyState, servers, clients []engine.Pod) error {
	var ips []net.IP
	for _, p := range append(append([]engine.Pod{}, servers...), clients...) {
		ips = append(ips, p.IP())
	}
	allow := policy.PodNetworks(ips)
	for _, x := range []struct {
		n    engine.Node
		pods []engine.Pod
	}{{c.Server(), servers}, {c.Client(), clients}} {
		veths, err := x.n.HostVeths(x.pods)
		if err != nil {
			return fmt.Errorf("policy on %s: %w", x.n.Name(), err)
		}
		eps := make([]policy.Endpoint, len(x.pods))
		for i, p := range x.pods {
			eps[i] = policy.Endpoint{Iface: veths[i].Name, IP: p.IP()}
		}
		rules, err := policy.Calico(sd.Policy, eps, allow, !st.hooked[x.n.Name()])
		if err != nil {
			return err
		}
		// iptables-restore reads a file the run wrote: no shell, no
		// user text on its command line.
		f := filepath.Join(r.out.Dir(), fmt.Sprintf(".policy-%s-%s.rules", sd.Name, x.n.Name()))
		if err := os.WriteFile(f, rules, 0o600); err != nil {
			return fmt.Errorf("policy on %s: %w", x.n.Name(), err)
		}
		p, err := x.n.Start(ctx, []string{"iptables-restore", "--noflush", f})
		if err == nil {
			_, _, err = p.Wait()
		}
		os.Remove(f)
		if err != nil {
			return fmt.Errorf("policy %s on %s: iptables-restore: %w", sd.Policy, x.n.Name(), err)
		}
		st.hooked[x.n.Name()] = true
		chains, n := policy.Count(rules)
		st.env.Chains[x.n.Name()], st.env.Rules[x.n.Name()] = chains, n
	}
	return nil
}
