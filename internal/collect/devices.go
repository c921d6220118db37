package collect

import (
	"context"
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

var devicesEntry = Entry{
	Name: "devices",
	Description: "packet and drop counters (`ip -s link`) of the server node's underlay, tunnel device and " +
		"measured pods, each group summed, over the window",
	Metrics: []string{"if_{underlay,tunnel,pods}_{rx,tx}_{packets,dropped}_count"},
	Enabled: func(w study.Workload) bool { return w.Counters },
	New:     newDevices,
}

// devices records the counters of device groups on the server node.
type devices struct {
	k      engine.Kernel
	groups []ifaceGroup
	before [][]ifstats.Counters
}

// ifaceGroup is a set of devices whose counters are summed under one name.
type ifaceGroup struct {
	name   string
	ifaces []netns.Iface
}

func newDevices(t Trial) (Collector, error) {
	srv := t.Cluster.Server()
	c := &devices{k: t.Kernel(srv)}
	c.groups = append(c.groups, ifaceGroup{"underlay", []netns.Iface{srv.Underlay()}})
	if tu, ok := srv.Tunnel(); ok {
		c.groups = append(c.groups, ifaceGroup{"tunnel", []netns.Iface{tu}})
	}
	c.groups = append(c.groups, ifaceGroup{"pods", serverIfaces(t)})
	return c, nil
}

// serverIfaces are the measured server pods' own devices, each once:
// host-network pods share the node's, which was counted once per pod (r
// pods multiplied if_pods_* by r and divided every cost per packet by r).
func serverIfaces(t Trial) []netns.Iface {
	srv := t.Cluster.Server()
	var out []netns.Iface
	for _, p := range t.Servers {
		if ifc := srv.PodIface(p); !slices.Contains(out, ifc) {
			out = append(out, ifc)
		}
	}
	return out
}

// read reads every group's devices in one request (one agent round trip
// on kube, so both ends of the window are read close to its edges).
func (c *devices) read() ([][]ifstats.Counters, error) {
	var all []netns.Iface
	for _, g := range c.groups {
		all = append(all, g.ifaces...)
	}
	flat, err := c.k.Ifaces(all)
	if err != nil {
		return nil, fmt.Errorf("interface counters: %w", err)
	}
	var out [][]ifstats.Counters
	for _, g := range c.groups {
		out = append(out, flat[:len(g.ifaces)])
		flat = flat[len(g.ifaces):]
	}
	return out, nil
}

func (c *devices) Start(context.Context) error {
	var err error
	c.before, err = c.read()
	return err
}

func (c *devices) Stop(context.Context) (Result, error) {
	after, err := c.read()
	if err != nil {
		return Result{}, err
	}
	m := map[string]float64{}
	for i, g := range c.groups {
		var sum ifstats.Counters
		for j := range after[i] {
			d := ifstats.Delta(c.before[i][j], after[i][j])
			sum.RxPackets += d.RxPackets
			sum.TxPackets += d.TxPackets
			sum.RxDropped += d.RxDropped
			sum.TxDropped += d.TxDropped
		}
		pre := "if_" + g.name + "_"
		m[pre+"rx_packets_count"] = float64(sum.RxPackets)
		m[pre+"tx_packets_count"] = float64(sum.TxPackets)
		m[pre+"rx_dropped_count"] = float64(sum.RxDropped)
		m[pre+"tx_dropped_count"] = float64(sum.TxDropped)
	}
	return Result{Metrics: m}, nil
}
