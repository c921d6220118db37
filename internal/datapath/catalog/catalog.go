// Package catalog is the one explicit list of datapaths the local engine
// can build. A new datapath is one package plus one line here.
package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/calicovxlan"
	"github.com/cnibench/cnibench/internal/datapath/flannelvxlan"
)

// All returns every datapath, in a stable order.
func All() []datapath.Datapath {
	return []datapath.Datapath{
		calicovxlan.New(),
		flannelvxlan.New(),
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
	return nil, fmt.Errorf("unknown datapath %q (known: %s)", name, strings.Join(Names(), ", "))
}
