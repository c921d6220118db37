package study

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/workload/spec"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Catalog names what the binary can run, so validation can reject unknown
// names without importing the packages that implement them.
type Catalog struct {
	Datapaths []string
	// CheckDatapath, when set, checks one entry's knobs against what its
	// datapath supports (largest MTU, policy style, wiring, implementation)
	// and returns problems keyed by the entry's field ("mtu").
	CheckDatapath func(d Datapath, underlayMTU int) map[string]string
	// Tools describe the workload tools: protocols, options with their
	// defaults and bounds (workload/registry.Tools()). They are handed in
	// rather than imported because the drivers import this package.
	Tools []spec.Tool
	// CheckImpairment, when set, resolves one spec.impairments entry
	// (impair.Resolve) and returns why it is bad; an *ImpairmentError
	// names the definition's field.
	CheckImpairment func(m Impairment) error
	// CollectorMetrics are the metric names the collectors add to a
	// trial ("*" for a part of a name; collect.Entry.Metrics): a precision
	// target may name one.
	CollectorMetrics []string
}

// Defaults fills fields left empty with the papers' defaults.
func (s *Study) Defaults() {
	sp := &s.Spec
	// A study of datapaths and workloads alone measures the machine as
	// it is with one pod pair: what a first study file means by leaving
	// them out (a stored study has them written).
	if len(sp.Tunings) == 0 {
		sp.Tunings = []Tuning{builtinTunings["baseline"]}
	}
	if len(sp.Replicas) == 0 {
		sp.Replicas = []int{1}
	}
	if sp.Baseline == "" {
		for _, t := range sp.Tunings {
			if t.Name == "baseline" {
				sp.Baseline = "baseline"
			}
		}
		if sp.Baseline == "" && len(sp.Tunings) > 0 && sp.Tunings[0].IsBaseline() {
			sp.Baseline = sp.Tunings[0].Name
		}
	}
	if sp.Nodes.UnderlayMTU == 0 {
		sp.Nodes.UnderlayMTU = 1500
	}
	for i := range sp.Workloads {
		w := &sp.Workloads[i]
		w.nameDefaults()
		if w.Placement == "" {
			w.Placement = PlacementInterNode
		}
	}
}

// toolDefaults fills the defaults the catalog's tool descriptions give
// (Parse calls it after Defaults; a stored study already has them).
func (s *Study) toolDefaults(cat Catalog) {
	for i := range s.Spec.Workloads {
		toolDefaults(&s.Spec.Workloads[i], cat)
	}
}

var (
	lengthRE = regexp.MustCompile(`^[1-9][0-9]*[KMG]?$`)
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// MaxReplicas bounds the pods a study may ask for per node.
const MaxReplicas = 250

// MaxPodsPerNode bounds the pods a variant needs per node
// (Workload.PodsPerNode): the engines' datapath.MaxPodsPerNode (a /24
// pod subnet per node), which this package cannot import; a runner test
// keeps the two equal.
const MaxPodsPerNode = 250

// Validate checks the study without touching the host. Each error names a
// field path; Parse adds file and line.
func (s *Study) Validate(cat Catalog) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if s.APIVersion != APIVersion {
		bad("apiVersion", "must be %q, got %q", APIVersion, s.APIVersion)
	}
	if s.Kind != Kind {
		bad("kind", "must be %q, got %q", Kind, s.Kind)
	}
	sp := &s.Spec
	validateDatapaths(sp, cat, bad)
	if _, err := sp.Link.RateBits(); err != nil {
		bad("spec.link.rate", "%v", err)
	}
	validateTunings(sp, bad)
	validateWorkloads(sp, cat, bad)
	validateSchedule(sp, bad)
	validateWarmup(sp, cat, bad)
	validatePrecisionMetric(sp, cat, bad)
	validateServiceProxy(sp, bad)
	checkPodsPerNode(s, cat, bad)
	validateImpairments(sp, cat, bad)
	validateToolFit(s, cat, bad)
	validateVerdict(s, bad)
	validateOnly(s, bad)
	for i, r := range sp.Reference {
		f := fmt.Sprintf("spec.reference[%d]", i)
		switch {
		case !r.Compares() && (r.Against != "" || r.AgainstWorkload != ""):
			bad(f+".ratio", "against and againstWorkload name the denominator of a ratio, or what a difference subtracts: give ratio or difference")
		case r.Value == nil && r.Normalized == nil && !r.Compares():
			bad(f, "give value, normalized, ratio or difference (with against)")
		case r.Compares() && r.Against == "" && r.AgainstWorkload == "":
			bad(f+".against", "a ratio is a mean over another's, a difference a mean less another's: give against (a datapath) or againstWorkload")
		case r.Against != "" && r.Datapath == "":
			bad(f+".datapath", "against divides by another datapath (or subtracts its mean): give the datapath it is compared with")
		case r.AgainstWorkload != "" && r.Workload == "":
			bad(f+".workload", "againstWorkload divides by another workload (or subtracts its mean): give the workload it is compared with")
		case r.Against == r.Datapath && r.AgainstWorkload == r.Workload:
			if r.Compares() {
				bad(f+".against", "a point against itself is a ratio of 1 and a difference of 0")
			}
		}
		// A reference to a tuning or replica count a profile leaves out is
		// fine: the report lists it as not measured.
	}
	// Names that become paths, list lengths, sizes and durations: after
	// the checks above so their messages come first.
	validateStudyBounds(s, bad)
	// A reference's names last: a value out of range or a name no
	// datapath could have says more than "the study has no ...".
	validateReferenceNames(s, bad)
	return errs
}

// validateDatapaths checks spec.datapaths against the catalog.
func validateDatapaths(sp *Spec, cat Catalog, bad badFunc) {
	if len(sp.Datapaths) == 0 {
		bad("spec.datapaths", "list at least one datapath (known: %s)", strings.Join(cat.Datapaths, ", "))
	}
	seen := map[string]bool{}
	for i, d := range sp.Datapaths {
		f := fmt.Sprintf("spec.datapaths[%d]", i)
		if !contains(cat.Datapaths, d.Type) {
			bad(f, "unknown datapath %q (%sknown: %s)", d.Type, suggest.Hint(d.Type, cat.Datapaths), strings.Join(cat.Datapaths, ", "))
			continue
		}
		if !nameRE.MatchString(d.Name) {
			bad(f+".name", "%q: use letters, digits, '.', '_' and '-'", d.Name)
		}
		if seen[d.Name] {
			bad(f, "datapath %q listed twice (give the second one its own name)", d.Name)
		}
		seen[d.Name] = true
		if d.MTU != 0 && (d.MTU < MinMTU || d.MTU > MaxMTU) {
			bad(f+".mtu", "must be between %d and %d, got %d", MinMTU, MaxMTU, d.MTU)
		}
		if !contains([]string{"", PolicyWith, PolicyWithout}, d.Policy) {
			bad(f+".policy", "must be %s (with network policy) or %s (the CNI's chains, no policy), got %q", PolicyWith, PolicyWithout, d.Policy)
		}
		if !contains([]string{"", WiringNetlink, WiringCNI}, d.Wiring) {
			bad(f+".wiring", "must be %s or %s, got %q", WiringNetlink, WiringCNI, d.Wiring)
		}
		if d.Implementation != "" && !contains(Implementations, d.Implementation) {
			bad(f+".implementation", "must be %s, %s or %s, got %q", ImplBuiltin, ImplFlanneld, ImplBird, d.Implementation)
		}
		if nf := d.Netfilter; nf != nil {
			validateNetfilter(f+".netfilter", d, bad)
		}
		if cat.CheckDatapath != nil {
			problems := cat.CheckDatapath(d, sp.Nodes.UnderlayMTU)
			var fields []string
			for k := range problems {
				fields = append(fields, k)
			}
			sortStrings(fields)
			for _, k := range fields {
				bad(f+"."+k, "%s", problems[k])
			}
		}
	}
}

// validateTunings checks spec.tunings and spec.baseline.
func validateTunings(sp *Spec, bad badFunc) {
	seen := map[string]bool{}
	for i, t := range sp.Tunings {
		f := fmt.Sprintf("spec.tunings[%d]", i)
		if t.Name == "" {
			bad(f+".name", "missing")
		}
		if seen[t.Name] {
			bad(f, "tuning %q listed twice", t.Name)
		}
		seen[t.Name] = true
		if t.RPS != nil {
			c := t.RPS.CPUs
			if c != CPUsAll && c != CPUsAllButSoftIRQ {
				if _, err := cpuset.Parse(c); err != nil {
					bad(f+".rps.cpus", "%q is not %q, %q or a CPU list like 0-2: %v", c, CPUsAll, CPUsAllButSoftIRQ, err)
				}
			}
		}
		if t.RFS != nil {
			validateRFS(f+".rfs", *t.RFS, bad)
		}
		if t.Pods && t.RPS == nil && t.RFS == nil && len(t.Sysctls) == 0 {
			bad(f+".pods", "pods: true without rps, rfs or sysctls changes nothing (a pod has no CPUs of its own to keep from idling)")
		}
		if c := t.CPUIdle; c != nil {
			if d := c.MaxExitLatency.Duration; d < 0 || d > MaxIdleExitLatency || d%time.Microsecond != 0 {
				bad(f+".cpuIdle.maxExitLatency", "want whole microseconds from 0s (poll only) to %s, got %s", MaxIdleExitLatency, d)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t.Sysctls)) {
			if msg := checkSysctl(k, t.Sysctls[k]); msg != "" {
				bad(f+".sysctls."+k, "%s", msg)
			}
		}
		if d := t.Devices; d != "" && d != DevicesNode && d != DevicesUnderlay {
			bad(f+".devices", "want %q (underlay, tunnel and pod veths) or %q, got %q", DevicesNode, DevicesUnderlay, d)
		} else if d != "" && t.RPS == nil && t.RFS == nil {
			bad(f+".devices", "devices says which devices rps and rfs go on; without them it changes nothing")
		}
		if sd := t.Side; sd != "" && sd != SideServer && sd != SideClient && sd != SideBoth {
			bad(f+".side", "want %q (the receiving end, as the paper tuned), %q or %q, got %q", SideServer, SideClient, SideBoth, sd)
		}
		if t.Side != "" && t.IsBaseline() {
			bad(f+".side", "side without rps, rfs, sysctls or cpuIdle changes nothing")
		}
	}
	if sp.Baseline != "" && !seen[sp.Baseline] {
		bad("spec.baseline", "baseline %q is not one of the study's tunings", sp.Baseline)
	}
}

// validateWorkloads checks spec.workloads against the catalog's tools.
func validateWorkloads(sp *Spec, cat Catalog, bad badFunc) {
	if len(sp.Workloads) == 0 {
		bad("spec.workloads", "list at least one workload (e.g. tool: iperf3)")
	}
	seen := map[string]bool{}
	for i := range sp.Workloads {
		w := &sp.Workloads[i]
		f := fmt.Sprintf("spec.workloads[%d]", i)
		if t, ok := cat.Tool(w.Tool); !ok {
			bad(f+".tool", "unknown workload tool %q (%sknown: %s)", w.Tool, suggest.Hint(w.Tool, cat.ToolNames()), strings.Join(cat.ToolNames(), ", "))
		} else if !contains(t.Protocols, w.Protocol) {
			bad(f+".protocol", "tool %s does not support protocol %q (supported: %s)", w.Tool, w.Protocol, strings.Join(t.Protocols, ", "))
		}
		validateWorkload(w, f, cat, bad)
		validateMSS(w, f, sp, bad)
		validatePinNodes(w, f, sp.Nodes, bad)
		if strings.ContainsAny(w.Name, "@/ ") {
			bad(f+".name", "workload name %q must not contain '@', '/' or spaces ('@' names a sweep's variants)", w.Name)
		}
		if seen[w.Name] {
			bad(f+".name", "workload name %q used twice", w.Name)
		}
		seen[w.Name] = true
	}
}

// validateWarmup refuses a warm-up a workload's tool cannot take: one
// above the bound of the option its program is handed it as
// (spec.Tool.MaxWarmup: iperf3's --omit refuses more than 60 s before
// 3.18), which
// would fail every trial after the nodes are built. Once per tool.
func validateWarmup(sp *Spec, cat Catalog, bad badFunc) {
	w := sp.Warmup.Duration
	seen := map[string]bool{}
	for _, wl := range sp.Workloads {
		t, ok := cat.Tool(wl.Tool)
		if !ok || seen[t.Name] || t.Task || t.MaxWarmup <= 0 {
			continue
		}
		if wl.UDPSender() == SenderPktgen {
			// pktgen offers the load: no iperf3 client, no --omit.
			continue
		}
		seen[t.Name] = true
		if w > t.MaxWarmup {
			bad("spec.warmup", "%s is more than %s accepts (%gs; workload %s)",
				ShortDuration(w), t.WarmupOption, t.MaxWarmup.Seconds(), wl.Name)
		}
	}
}

// validateSchedule checks replicas, trials, duration, warm-up and nodes.
func validateSchedule(sp *Spec, bad badFunc) {
	for i, r := range sp.Replicas {
		if r <= 0 || r > MaxReplicas {
			bad(fmt.Sprintf("spec.replicas[%d]", i), "replica count must be between 1 and %d, got %d", MaxReplicas, r)
		}
	}
	validateAdaptive(sp, bad)
	switch {
	case sp.Duration.Duration == 0:
		bad("spec.duration", "missing or 0: give the length of each trial, warm-up included (e.g. 32s with warmup: 2s, as in the rps-rfs paper)")
	case sp.Duration.Duration < 0:
		bad("spec.duration", "must be > 0")
	}
	if sp.Warmup.Duration < 0 {
		bad("spec.warmup", "must be >= 0")
	}
	if sp.Duration.Duration > 0 && sp.Duration.Duration <= sp.Warmup.Duration {
		bad("spec.duration", "duration %s must be longer than warmup %s (the warm-up is omitted from the measured window)",
			sp.Duration.Duration, sp.Warmup.Duration)
	}
	if sp.Duration.Duration > 0 && sp.Duration.Duration%1e9 != 0 {
		bad("spec.duration", "must be whole seconds (iperf3 -t), got %s", sp.Duration.Duration)
	}
	if sp.Warmup.Duration%1e9 != 0 {
		bad("spec.warmup", "must be whole seconds (iperf3 -O), got %s", sp.Warmup.Duration)
	}
	for _, n := range []struct {
		f string
		c string
	}{{"spec.nodes.server.cpus", sp.Nodes.Server.CPUs}, {"spec.nodes.client.cpus", sp.Nodes.Client.CPUs}} {
		if n.c != "" {
			if _, err := cpuset.Parse(n.c); err != nil {
				bad(n.f, "%v", err)
			}
		}
	}
	if m := sp.Nodes.UnderlayMTU; m < MinUnderlayMTU || m > MaxMTU {
		bad("spec.nodes.underlayMTU", "must be between %d and %d, got %d", MinUnderlayMTU, MaxMTU, m)
	}
}

// DatapathNames lists the study's datapath names in order.
func (s *Study) DatapathNames() []string {
	var out []string
	for _, d := range s.Spec.Datapaths {
		out = append(out, d.Name)
	}
	return out
}

// Datapath returns the study's datapath of that name.
func (s *Study) Datapath(name string) (Datapath, bool) {
	for _, d := range s.Spec.Datapaths {
		if d.Name == name {
			return d, true
		}
	}
	return Datapath{}, false
}

// Tuning returns the study's tuning of that name.
func (s *Study) Tuning(name string) (Tuning, bool) {
	for _, t := range s.Spec.Tunings {
		if t.Name == name {
			return t, true
		}
	}
	return Tuning{}, false
}

// Workload returns the study's workload or sweep variant of that name.
func (s *Study) Workload(name string) (Workload, bool) {
	for _, w := range s.Variants() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validateServiceProxy refuses a Service workload on a datapath whose
// netfilter state has no Service proxy (kubeProxy: none): with none there
// is nothing to translate a ClusterIP, and installing kube-proxy's rules
// for the trial anyway would measure a proxy the study said is absent.
func validateServiceProxy(sp *Spec, bad badFunc) {
	for i, w := range sp.Workloads {
		if w.Target != TargetService && w.Target != TargetHairpin {
			continue
		}
		for _, d := range sp.Datapaths {
			if nf := d.Netfilter; nf != nil && nf.KubeProxy == KubeProxyNone {
				bad(fmt.Sprintf("spec.workloads[%d].%s", i, OptTarget), "%s needs a Service proxy, and datapath %s has kubeProxy: none (use target: pod there, or a kubeProxy)", w.Target, d.Name)
				return
			}
		}
	}
}

// validateNetfilter checks a datapath entry's netfilter field; the CNI
// name is checked against the generators by Catalog.CheckDatapath.
func validateNetfilter(f string, d Datapath, bad badFunc) {
	nf := d.Netfilter
	if nf.CNI == "" {
		bad(f+".cni", "missing: name the CNI whose rules to install (flannel, weave, cilium, kube-router, calico-wp-xsub, ...)")
	}
	if !contains([]string{"", KubeProxyIptables, KubeProxyNFT, KubeProxyIPVS, KubeProxyKubeRouter, KubeProxyCilium, KubeProxyNone}, nf.KubeProxy) {
		bad(f+".kubeProxy", "must be %s, %s, %s, %s, %s or %s, got %q", KubeProxyIptables, KubeProxyNFT, KubeProxyIPVS, KubeProxyKubeRouter, KubeProxyCilium, KubeProxyNone, nf.KubeProxy)
	}
	if nf.KubeProxy == KubeProxyCilium && nf.CNI != "cilium-kpr" {
		bad(f+".kubeProxy", "cilium (the kube-proxy replacement) comes with Cilium's own rules for it: set cni: cilium-kpr, got %q", nf.CNI)
	}
	if nf.Services < 0 || nf.Services > MaxServices {
		bad(f+".services", "must be between 1 and %d (or left out for %d), got %d", MaxServices, DefaultServices, nf.Services)
	}
	if nf.Endpoints < 0 || nf.Endpoints > MaxEndpoints {
		bad(f+".endpoints", "must be between 1 and %d (or left out for %d), got %d", MaxEndpoints, DefaultEndpoints, nf.Endpoints)
	}
	if nf.ServiceCount()*nf.EndpointCount() > MaxServiceEndpoints {
		bad(f+".endpoints", "%d Services x %d endpoints is more than %d endpoint chains", nf.ServiceCount(), nf.EndpointCount(), MaxServiceEndpoints)
	}
	if nf.KubeProxy == KubeProxyNone && (nf.Services != 0 || nf.Endpoints != 0) {
		bad(f+".services", "Services need kube-proxy: kubeProxy is none")
	}
	if d.Policy != "" {
		bad(f, "policy and netfilter both write Calico's chains: drop policy and use netfilter {cni: calico-wp-xsub} (with policy) or calico-np-xsub")
	}
}
