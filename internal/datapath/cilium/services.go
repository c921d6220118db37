package cilium

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cilium/ebpf"

	"github.com/cnibench/cnibench/internal/lbmap"
	"github.com/cnibench/cnibench/internal/netfilter"
)

var _ lbmap.Translator = (*Datapath)(nil)

// SetServices makes svcs the ClusterIP Services every node's
// from_container translates per packet (bpf/cilium.c, lb4), replacing
// the last set, as the Cilium agent writes each node's
// cilium_lb4_services_v2 from the Services it watches. Real Cilium does
// this whether or not kube-proxy runs beside it, so a pod's packets to a
// ClusterIP never reach kube-proxy's rules; and it must, because its
// redirects take packets past the nodes' conntrack, where kube-proxy's
// DNAT could not be reversed for the replies.
// Equivalent to: bpftool map update name lb4_services ... (per Service
// and backend slot) and name lb4_backends ..., on every node.
func (d *Datapath) SetServices(svcs []netfilter.Service) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	nss := make([]string, 0, len(d.nodes))
	for ns := range d.nodes {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	var errs []error
	for _, ns := range nss {
		st := d.nodes[ns]
		if st.services == nil {
			st.services = &lbmap.Table{Services: st.objs.Lb4Services, Backends: st.objs.Lb4Backends}
		}
		if err := st.services.Set(svcs); err != nil {
			errs = append(errs, fmt.Errorf("cilium Services on %s: %w", ns, err))
		}
		// The flows translated so far name backends by the ids of the
		// last set: forget them, as the agent's CT GC would.
		for _, m := range []*ebpf.Map{st.objs.Ct4, st.objs.Revnat4} {
			if err := flush(m); err != nil {
				errs = append(errs, fmt.Errorf("cilium flow tables on %s: %w", ns, err))
			}
		}
	}
	return errors.Join(errs...)
}

// flush deletes every entry of a flow table (keys first: deleting while
// iterating a hash map makes the iteration start over).
func flush(m *ebpf.Map) error {
	var (
		k    bpfCt4Key
		keys []bpfCt4Key
		v    = make([]byte, m.ValueSize())
	)
	it := m.Iterate()
	for it.Next(&k, &v) {
		keys = append(keys, k)
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}
