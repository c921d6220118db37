// Package catalog is the one explicit list of datapaths the local engine
// can build. A new datapath is one package plus one line here.
package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/bridge"
	"github.com/cnibench/cnibench/internal/datapath/calicoipip"
	"github.com/cnibench/cnibench/internal/datapath/calicorouted"
	"github.com/cnibench/cnibench/internal/datapath/calicovxlan"
	"github.com/cnibench/cnibench/internal/datapath/cilium"
	"github.com/cnibench/cnibench/internal/datapath/flanneld"
	"github.com/cnibench/cnibench/internal/datapath/flannelvxlan"
	"github.com/cnibench/cnibench/internal/datapath/geneve"
	"github.com/cnibench/cnibench/internal/datapath/gre"
	"github.com/cnibench/cnibench/internal/datapath/hostnet"
	"github.com/cnibench/cnibench/internal/datapath/ipvlan"
	"github.com/cnibench/cnibench/internal/datapath/kuberouter"
	"github.com/cnibench/cnibench/internal/datapath/macvlan"
	"github.com/cnibench/cnibench/internal/datapath/ovs"
	"github.com/cnibench/cnibench/internal/datapath/weave"
	"github.com/cnibench/cnibench/internal/datapath/wireguard"

	"github.com/cnibench/cnibench/internal/suggest"
)

// All returns every datapath, in a stable order.
func All() []datapath.Datapath {
	return []datapath.Datapath{
		calicovxlan.New(),
		flannelvxlan.New(),
		hostnet.New(),
		bridge.New(),
		calicorouted.New(),
		calicoipip.New(),
		macvlan.New(),
		ipvlan.New(),
		ipvlan.NewL3(),
		geneve.New(),
		gre.New(),
		wireguard.New(),
		cilium.New(),
		flanneld.New(),
		weave.New(),
		ovs.New(),
		kuberouter.New(),
	}
}

// Names lists the datapath names.
func Names() []string {
	var out []string
	for _, d := range All() {
		out = append(out, d.Name())
	}
	sort.Strings(out)
	return out
}

// Lookup finds a datapath by name.
func Lookup(name string) (datapath.Datapath, error) {
	for _, d := range All() {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown datapath %q (%sknown: %s)", name, suggest.Hint(name, Names()), strings.Join(Names(), ", "))
}
