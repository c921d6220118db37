package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// envView is the report's environment section: env.json's facts as
// name-value lines, and the longer ones as details.
func envView(run *results.Run) ([][2]string, []detail) {
	if !run.HasEnv {
		return [][2]string{{"env.json", "missing"}}, nil
	}
	e := run.Env
	kv := [][2]string{
		{"tool", strings.TrimSpace(e.Tool + " " + e.Version)},
		{"run id", e.RunID},
		{"engine", e.Engine},
		{"host", orUnknown(e.Hostname)},
		{"kernel", orUnknown(e.Kernel)},
		{"CPU", cpuText(e)},
	}
	if e.CPUIdle != nil {
		kv = append(kv, [2]string{"CPU idle", e.CPUIdle.String()})
	}
	if !e.Started.IsZero() {
		kv = append(kv, [2]string{"started", e.Started.UTC().Format(time.RFC3339)})
	}
	if e.Origin != nil && len(e.Origin.Command) > 0 {
		kv = append(kv, [2]string{"command", cmdline.Quote(e.Origin.Command)})
	}
	kv = append(kv, [2]string{"node CPUs", nodeCPUsText(e.NodeCPUs)})
	if e.CNI != nil {
		v := e.CNI.String()
		if len(e.CNI.Evidence) > 0 {
			v += " (evidence: " + strings.Join(e.CNI.Evidence, "; ") + ")"
		}
		kv = append(kv, [2]string{"CNI", v})
	}
	if im := e.ImageString(); im != "" {
		kv = append(kv, [2]string{"workload image", im})
	}
	var tools []string
	for _, k := range sortedKeys(e.Tools) {
		tools = append(tools, k+" "+e.Tools[k])
	}
	if len(tools) > 0 {
		kv = append(kv, [2]string{"tools", strings.Join(tools, "; ")})
	}
	for _, name := range sortedKeys(e.Datapaths) {
		kv = append(kv, [2]string{"datapath " + name, datapathText(e.Datapaths[name])})
	}
	var det []detail
	if len(e.Offloads) > 0 {
		d := detail{Summary: "Offloads before the run (ethtool -k)"}
		for _, iface := range sortedKeys(e.Offloads) {
			var on, off []string
			for _, f := range sortedKeys(e.Offloads[iface]) {
				if e.Offloads[iface][f] {
					on = append(on, f)
				} else {
					off = append(off, f)
				}
			}
			d.Lines = append(d.Lines, fmt.Sprintf("%s: on: %s; off: %s", iface, strings.Join(on, ", "), strings.Join(off, ", ")))
		}
		det = append(det, d)
	}
	if len(e.Steering) > 0 {
		d := detail{Summary: "Receive steering before the run"}
		for _, k := range sortedKeys(e.Steering) {
			d.Lines = append(d.Lines, k+" = "+e.Steering[k])
		}
		det = append(det, d)
	}
	if len(e.Sysctls) > 0 {
		d := detail{Summary: "Sysctls the tunings set, before the run"}
		for _, k := range sortedKeys(e.Sysctls) {
			d.Lines = append(d.Lines, k+" = "+e.Sysctls[k])
		}
		det = append(det, d)
	}
	return kv, det
}

// datapathText says in one line how a datapath of the run was built.
func datapathText(d results.DatapathEnv) string {
	parts := []string{d.Type}
	if d.Mode != "" {
		m := "mode " + d.Mode
		if d.StandIn != "" {
			m += " (" + d.StandIn + ")"
		}
		parts = append(parts, m)
	}
	if d.Implementation != "" {
		parts = append(parts, "by "+d.Implementation)
	}
	if d.Wiring != "" {
		parts = append(parts, "wiring "+d.Wiring)
	}
	if d.PodMTU > 0 {
		parts = append(parts, fmt.Sprintf("pod MTU %d", d.PodMTU))
	}
	if d.LinkRate > 0 {
		parts = append(parts, fmt.Sprintf("line rate %g Mbit/s", float64(d.LinkRate)/1e6))
	}
	if len(d.Offloads) > 0 {
		parts = append(parts, "offloads: "+strings.Join(d.Offloads, "; "))
	}
	switch v := d.BridgeNFCallIPTables; v {
	case "":
	case "absent":
		parts = append(parts, "br_netfilter not loaded")
	default:
		parts = append(parts, "bridge-nf-call-iptables="+v)
	}
	if p := d.PodNetwork; p != nil {
		parts = append(parts, fmt.Sprintf("pod network setup median %.1f ms (max %.1f, %d pods), teardown median %.1f ms (max %.1f, %d pods)",
			p.SetupMedianMs, p.SetupMaxMs, p.Pods, p.TeardownMedianMs, p.TeardownMaxMs, p.TeardownPods))
	}
	if p := d.Policy; p != nil {
		var per []string
		for _, n := range sortedKeys(p.Chains) {
			per = append(per, fmt.Sprintf("%s %d chains, %d rules", n, p.Chains[n], p.Rules[n]))
		}
		parts = append(parts, fmt.Sprintf("%s policy %s (%s)", p.Style, p.Mode, strings.Join(per, "; ")))
	}
	if n := d.Netfilter; n != nil {
		parts = append(parts, netfilterText(*n))
	}
	return strings.Join(parts, ", ")
}

// netfilterText says whose rules a datapath's nodes held (knob
// netfilter): the CNI and the code its model follows, the Service proxy
// and its Services, and what went on each node. Table III's counts are
// of these rules, which the reader must see to weigh them against the
// paper's real daemons'.
func netfilterText(n results.NetfilterEnv) string {
	proxy := "no Service proxy"
	if n.KubeProxy != "" && n.KubeProxy != "none" {
		proxy = fmt.Sprintf("Service proxy %s with %d Services", n.KubeProxy, n.Services)
		if n.Endpoints > 0 {
			proxy += fmt.Sprintf(" of %d endpoints", n.Endpoints)
		}
	}
	if n.SocketLB != "" {
		proxy += " (" + n.SocketLB + ")"
	}
	var per []string
	for _, node := range sortedKeys(n.Chains) {
		per = append(per, fmt.Sprintf("%s %d chains, %d rules", node, n.Chains[node], n.Rules[node]))
	}
	out := fmt.Sprintf("netfilter %s (rules modelled on %s) and %s, the kubelet's rules beside them", n.CNI, n.Source, proxy)
	if len(per) > 0 {
		out += ", installed: " + strings.Join(per, "; ")
	}
	return out
}

// cpuText says the machine's CPUs: "64 × MODEL, 2 NUMA node(s)", with
// what env.json left blank (a cluster node its agent could not describe;
// an older run's arm64 model) left out or said unknown, not printed as
// "0 × , 0 NUMA node(s)".
func cpuText(e results.Env) string {
	var parts []string
	switch {
	case e.CPUs > 0 && e.CPUModel != "":
		parts = append(parts, fmt.Sprintf("%d × %s", e.CPUs, e.CPUModel))
	case e.CPUs > 0:
		parts = append(parts, fmt.Sprintf("%d CPUs, model unknown", e.CPUs))
	case e.CPUModel != "":
		parts = append(parts, e.CPUModel+", count unknown")
	}
	if e.NUMANodes > 0 {
		parts = append(parts, fmt.Sprintf("%d NUMA node(s)", e.NUMANodes))
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// orUnknown is s, or "unknown" where env.json left it blank.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func nodeCPUsText(m map[string][]int) string {
	if len(m) == 0 {
		return "not recorded"
	}
	var parts []string
	for _, n := range sortedKeys(m) {
		c := "all (shared)"
		if len(m[n]) > 0 {
			c = cpuset.Set(slices.Sorted(slices.Values(m[n]))).String()
		}
		parts = append(parts, n+": "+c)
	}
	return strings.Join(parts, "; ")
}
