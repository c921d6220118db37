// Package spec is how a workload driver describes itself: the options a
// study may give it (with defaults and bounds), the programs it runs (with
// their Debian packages and how they print their version), its headline
// metrics per protocol, and what of it the kube engine runs.
//
// Design notes: the description is pure data (but for one function,
// Tool.RefuseImpairment) and this package imports nothing of cnibench,
// so both ends can read it without import cycles. Drivers import
// internal/study (for study.Workload), so study cannot import the drivers
// or their registry; it imports this leaf package for the types only,
// and receives the registry's descriptions in study.Catalog, which
// internal/app already builds from the registries and hands to Resolve.
// Injection through the catalog was preferred over a package-level table
// that drivers fill at init: one explicit list (workload/registry), no
// mutable global, and study tests can validate against a small catalog of
// their own.
package spec

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Tool describes one workload tool, as returned by its driver's Describe.
type Tool struct {
	// Name is the tool's name in study files ("iperf3").
	Name string
	// Protocols are the protocols it runs ("tcp", "udp").
	Protocols []string
	// Options are the study-file options the tool accepts, in the order
	// errors list them.
	Options []Option
	// Programs are what the tool runs in the pods, on this machine (local
	// engine) or from the workload image (kube engine).
	Programs []Program
	// Headline are the tool's key metrics, in the order workload tables
	// show them.
	Headline []Metric
	// Kube says what of the tool the kube engine runs.
	Kube Kube
	// Task marks a tool whose trial is a task that ends when it is done
	// (start a burst of pods), not traffic for the study's duration: the
	// duration and warm-up do not apply to it, and the collectors' window
	// is the task itself.
	Task bool
	// SecondPort marks a tool whose server also listens on a second TCP
	// port (engine.SecondPortOffset above its own), which the client
	// reaches at the address it was given. The kube engine's Services
	// forward it; knob service-path's modelled Services (one port each,
	// as the paper's) do not, so on the local engine such a tool is not
	// reached through a Service (target service or hairpin).
	SecondPort bool
	// RoundTrips marks a tool whose rate is set by round trips (a
	// request waits for its response: sockperf's ping-pong, qperf's
	// latency tests, ab's requests): a core that idles between them is
	// woken for each, and other work on the machine keeps cores from
	// idling, which makes round trips shorter, not longer. The noise
	// guard holds its trials to study.Noise's stricter outside-CPU bound.
	RoundTrips bool
	// MaxWarmup bounds the study's warm-up (spec.warmup) for a tool
	// whose program is handed it as an option it bounds itself (iperf3's
	// --omit, MAX_OMIT_TIME: 3.12 refuses -O 61), so that validation
	// refuses it before any node is built; WarmupOption names that
	// option for the error ("iperf3's --omit"). 0: the tool takes any
	// warm-up the study format does (the warm-up only opens the
	// collectors' window, or the driver runs it itself).
	MaxWarmup    time.Duration
	WarmupOption string
	// MinDuration is the shortest trial (spec.duration) the tool's
	// driver runs, and MinDurationWhy says why, for the error (sockperf
	// leaves out its first 400 ms and a tail); validation refuses a
	// shorter one before any node is built. 0: any duration the study
	// format takes.
	MinDuration    time.Duration
	MinDurationWhy string
	// FilesPerRequest is how many files one request in flight holds open
	// in the tool's busiest process, and FilesBase how many it holds
	// besides (listening sockets, logs, libraries): preflight bounds
	// spec.concurrency by this machine's hard open-file limit with them,
	// since a process may raise its soft limit only to the hard one and
	// past it every trial fails ("Too many open files"). 0: the tool's
	// concurrency is not bounded by open files.
	FilesPerRequest, FilesBase int
	// Data says which way the tool's measured data goes, against which
	// the runner notes an impairment place that acts on the other way
	// alone (flow.go).
	Data Data
	// RefuseImpairment, when set, says why the tool cannot measure
	// protocol through an impairment of spec.impairments on its path (a
	// preset's name, or a definition's name and netem fields), or ""
	// when it can: qperf's UDP latency test waits for each reply without
	// a timeout, so one lost datagram stalls it for the rest of the
	// trial. It is the description's one function: what an impairment
	// does is known to package impair alone (its presets too), which
	// study cannot import and a driver can.
	RefuseImpairment func(protocol, name string, fields map[string]string) string
}

// Option is one study-file option of a tool.
type Option struct {
	// Name is the key in a study file ("messageSize").
	Name string
	// Sweep is the list form that sweeps the option ("messageSizes"); ""
	// when there is none.
	Sweep string
	// Doc names what the option sets, as a noun phrase that fits "a UDP
	// test needs ..." ("an offered bitrate").
	Doc string
	// Default is the value an unset option takes, as a study file writes
	// it ("64", "5M"); study.Defaults fills it in, so the resolved study
	// says what ran. "" leaves the option to the tool, and Unset says
	// what the tool then does.
	Default string
	Unset   string
	// Min and Max bound each value of an integer option, or each size
	// of a size option (length, size) in bytes; both 0: no bounds.
	Min, Max int
	// MaxFor tightens Max for some protocols (iperf3's UDP datagram is
	// at most 65507 B, its TCP block 1 MiB), and MinFor raises Min for
	// some (iperf3 refuses a UDP block below 16 B, MIN_UDP_BLOCKSIZE,
	// its sequence number and timestamp, where a TCP block may be 1 B).
	MaxFor map[string]int
	MinFor map[string]int
	// RequiredFor lists the protocols for which the option must be given;
	// OrInstead names options that stand in for it (lossCeiling finds the
	// rate a UDP test otherwise needs).
	RequiredFor []string
	OrInstead   []string
	// OnlyFor lists the only protocols the option applies to (mss: TCP);
	// nil: all of the tool's.
	OnlyFor []string
	// Note says why the bounds or the requirement, for the error.
	Note string
	// Programs are run besides the tool's own when the option is set
	// (taskset for pin).
	Programs []Program
}

// Program is one program a tool or an option runs.
type Program struct {
	// Name is the program as looked up in PATH ("nginx").
	Name string
	// Package is the Debian package that ships it ("nginx-light").
	Package string
	// Version is the argv that prints its version on the first line
	// ({"nginx", "-v"}), for doctor and env.json.
	Version []string
}

// Metric is one headline metric of a tool.
type Metric struct {
	// Name is the metric's name in samples and summaries.
	Name string
	// Protocols are those of the tool's protocols that report it; nil
	// means all of them.
	Protocols []string
}

// KubeSupport says how much of a tool the kube engine runs.
type KubeSupport string

// Kube support levels; the zero value states nothing and fails Check.
const (
	// KubeAll: every option runs on a cluster, with the same driver.
	KubeAll KubeSupport = "all"
	// KubeSome: everything but the options listed in Kube.Unsupported.
	KubeSome KubeSupport = "some"
	// KubeNone: the tool does not run on a cluster.
	KubeNone KubeSupport = "none"
)

// Kube is what of a tool the kube engine runs.
type Kube struct {
	Support KubeSupport
	// Unsupported maps an option the kube engine cannot run to a phrase
	// naming it and why not, for "workload NAME: PHRASE".
	Unsupported map[string]string
}

// Option returns the tool's option of that name (or of that sweep name).
func (t Tool) Option(name string) (Option, bool) {
	for _, o := range t.Options {
		if o.Name == name || (o.Sweep != "" && o.Sweep == name) {
			return o, true
		}
	}
	return Option{}, false
}

// MaxOf is the option's bound for one protocol: MaxFor's if given, else
// Max.
func (o Option) MaxOf(protocol string) int {
	if m, ok := o.MaxFor[protocol]; ok {
		return m
	}
	return o.Max
}

// MinOf is the option's lower bound for one protocol: MinFor's if
// given, else Min.
func (o Option) MinOf(protocol string) int {
	if m, ok := o.MinFor[protocol]; ok {
		return m
	}
	return o.Min
}

// OptionNames lists the option and sweep names the tool accepts, in order.
func (t Tool) OptionNames() []string {
	var out []string
	for _, o := range t.Options {
		out = append(out, o.Name)
		if o.Sweep != "" {
			out = append(out, o.Sweep)
		}
	}
	return out
}

// HeadlineFor lists the headline metrics of one protocol, in order.
func (t Tool) HeadlineFor(protocol string) []string {
	var out []string
	for _, m := range t.Headline {
		if m.Protocols == nil || slices.Contains(m.Protocols, protocol) {
			out = append(out, m.Name)
		}
	}
	return out
}

// Check reports every part of the description that is missing or
// inconsistent, so a registry test fails for an incomplete driver.
func (t Tool) Check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(t.Name+": "+format, a...)) }
	if t.Name == "" {
		bad("no name")
	}
	if len(t.Protocols) == 0 {
		bad("no protocol")
	}
	if len(t.Options) == 0 {
		bad("no option")
	}
	for _, o := range t.Options {
		errs = append(errs, o.check(t)...)
	}
	if len(t.Programs) == 0 && !t.Task {
		// A task may be the engine's own work (pod start-up).
		bad("no program")
	}
	for _, p := range t.Programs {
		if err := p.Check(); err != nil {
			bad("%v", err)
		}
	}
	for _, proto := range t.Protocols {
		if len(t.HeadlineFor(proto)) == 0 {
			bad("no headline metric for protocol %s", proto)
		}
	}
	for _, m := range t.Headline {
		if m.Name == "" {
			bad("headline metric without a name")
		}
	}
	if t.MaxWarmup < 0 || (t.MaxWarmup > 0) == (t.WarmupOption == "") || (t.MaxWarmup > 0 && t.Task) {
		bad("MaxWarmup (%v) and WarmupOption (%q) go together, on a tool that is not a task", t.MaxWarmup, t.WarmupOption)
	}
	if t.MinDuration < 0 || (t.MinDuration > 0) == (t.MinDurationWhy == "") || (t.MinDuration > 0 && t.Task) {
		bad("MinDuration (%v) and MinDurationWhy (%q) go together, on a tool that is not a task", t.MinDuration, t.MinDurationWhy)
	}
	errs = append(errs, t.Kube.check(t)...)
	errs = append(errs, t.Data.check(t)...)
	return errors.Join(errs...)
}

func (o Option) check(t Tool) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: option %q: "+format, append([]any{t.Name, o.Name}, a...)...))
	}
	if o.Name == "" || o.Doc == "" {
		bad("needs a name and a doc")
	}
	if (o.Default == "") == (o.Unset == "") {
		bad("give either Default (filled in) or Unset (what the tool does without it)")
	}
	if o.Min > o.Max {
		bad("min %d above max %d", o.Min, o.Max)
	}
	for p, m := range o.MaxFor {
		if !slices.Contains(t.Protocols, p) || m < o.Min || m > o.Max {
			bad("max for %s (%d) is not a protocol of the tool with a max between min and max", p, m)
		}
	}
	for p, m := range o.MinFor {
		if !slices.Contains(t.Protocols, p) || m < o.Min || m > o.MaxOf(p) {
			bad("min for %s (%d) is not a protocol of the tool with a min between min and its max", p, m)
		}
	}
	for _, p := range append(slices.Clone(o.RequiredFor), o.OnlyFor...) {
		if !slices.Contains(t.Protocols, p) {
			bad("required for or limited to protocol %s the tool does not run", p)
		}
	}
	for _, n := range o.OrInstead {
		if _, ok := t.Option(n); !ok {
			bad("stands in for option %q the tool does not have", n)
		}
	}
	if (o.Max > 0 || len(o.RequiredFor) > 0 || len(o.OnlyFor) > 0) && o.Note == "" {
		bad("bounds or a requirement need a note saying why")
	}
	for _, p := range o.Programs {
		if err := p.Check(); err != nil {
			bad("%v", err)
		}
	}
	return errs
}

// Check reports a program without a name, Debian package or version argv.
func (p Program) Check() error {
	if p.Name == "" || p.Package == "" || len(p.Version) == 0 {
		return fmt.Errorf("program %q needs a name, a Debian package and a version argv", p.Name)
	}
	return nil
}

func (k Kube) check(t Tool) []error {
	var errs []error
	switch k.Support {
	case KubeAll, KubeNone:
		if len(k.Unsupported) > 0 {
			errs = append(errs, fmt.Errorf("%s: kube support %q lists unsupported options", t.Name, k.Support))
		}
	case KubeSome:
		if len(k.Unsupported) == 0 {
			errs = append(errs, fmt.Errorf("%s: kube support %q lists no unsupported option", t.Name, k.Support))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: kube support not stated (all, some or none)", t.Name))
	}
	for o, why := range k.Unsupported {
		if _, ok := t.Option(o); !ok || why == "" {
			errs = append(errs, fmt.Errorf("%s: kube-unsupported option %q is not an option of the tool or lacks a reason", t.Name, o))
		}
	}
	return errs
}
