// Package registry is the one list of workload drivers the binary knows.
// Adding a tool is one line in Drivers.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ab"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

// Drivers returns every workload driver, freshly built.
func Drivers() []workload.Driver {
	return []workload.Driver{
		iperf3.New(),
		sockperf.New(),
		ab.New(),
	}
}

// Lookup returns the driver of tool; the error wraps
// workload.ErrUnknownTool and lists the known tools.
func Lookup(tool string) (workload.Driver, error) {
	var known []string
	for _, d := range Drivers() {
		if d.Tool() == tool {
			return d, nil
		}
		known = append(known, d.Tool())
	}
	sort.Strings(known)
	return nil, fmt.Errorf("%w %q (known: %s)", workload.ErrUnknownTool, tool, strings.Join(known, ", "))
}

// Tools maps each tool to its protocols, the shape study.Catalog.Tools
// wants for validating study files.
func Tools() map[string][]string {
	m := map[string][]string{}
	for _, d := range Drivers() {
		m[d.Tool()] = append([]string(nil), d.Protocols()...)
	}
	return m
}
