package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Workload option names as written in study files. Which tool accepts
// which, with what default and bounds, is the tool's description
// (spec.Tool, from the workload registry through Catalog.Tools); this
// package knows only which Workload field each name is, so a study asking
// a tool for something it cannot do (UDP ab, concurrency on iperf3, rates
// on sockperf) is rejected with the field's line before anything runs.
const (
	OptLength      = "length"
	OptLengths     = "lengths"
	OptRate        = "rate"
	OptRates       = "rates"
	OptParallel    = "parallel"
	OptParallels   = "parallels"
	OptReverse     = "reverse"
	OptPlacement   = "placement"
	OptPin         = "pin"
	OptMessageSize = "messageSize"
	OptMsgSizes    = "messageSizes"
	OptConcurrency = "concurrency"
	OptPods        = "pods"
	OptRequests    = "requests"
	OptSize        = "size"
	OptBackground  = "background"
	OptCPP         = "cpp"
	OptCounters    = "counters"
	OptMSS         = "mss"
	OptMSSes       = "msses"
	OptLossCeiling = "lossCeiling"
	OptCeilingSrch = "ceilingSearch"
	OptSender      = "sender"
	OptTarget      = "target"
)

// Targets a workload's client may address its server at (OptTarget);
// empty is the engine's own (pod IP locally, the Service on a cluster).
const (
	TargetPod     = "pod"
	TargetService = "service"
	TargetHairpin = "hairpin"
)

// field is one option's place in Workload.
type field struct {
	name  string
	sweep string // the list form, if any
	// set reports whether the study gives the option (scalar or list).
	set func(w *Workload) bool
	// scalar and list are an integer option's values, for bounds (scalar
	// 0 is unset); nil for options that are not integers.
	scalar func(w *Workload) int
	list   func(w *Workload) []int
	// fill sets a default (spec.Option.Default) on an unset option.
	fill func(w *Workload, v string) error
}

func atoiInto(dst *int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		*dst = n
		return err
	}
}

// fields lists every option a Workload can carry, in field order. The
// list forms (lengths, rates, ...) are the same field as their scalar.
var fields = []field{
	{name: OptLength, sweep: OptLengths, set: func(w *Workload) bool { return w.Length != "" || len(w.Lengths) > 0 },
		fill: func(w *Workload, v string) error { w.Length = v; return nil }},
	{name: OptRate, sweep: OptRates, set: func(w *Workload) bool { return w.Rate != "" || len(w.Rates) > 0 },
		fill: func(w *Workload, v string) error { w.Rate = v; return nil }},
	{name: OptParallel, sweep: OptParallels, set: func(w *Workload) bool { return w.Parallel != 0 || len(w.Parallels) > 0 },
		scalar: func(w *Workload) int { return w.Parallel }, list: func(w *Workload) []int { return w.Parallels },
		fill: func(w *Workload, v string) error { return atoiInto(&w.Parallel)(v) }},
	{name: OptReverse, set: func(w *Workload) bool { return w.Reverse },
		fill: func(w *Workload, v string) (err error) { w.Reverse, err = strconv.ParseBool(v); return err }},
	{name: OptPlacement, set: func(w *Workload) bool { return w.Placement != "" },
		fill: func(w *Workload, v string) error { w.Placement = v; return nil }},
	{name: OptPin, set: func(w *Workload) bool { return w.Pin != nil },
		fill: func(*Workload, string) error { return fmt.Errorf("pin has no default value") }},
	{name: OptMessageSize, sweep: OptMsgSizes, set: func(w *Workload) bool { return w.MessageSize != 0 || len(w.MessageSizes) > 0 },
		scalar: func(w *Workload) int { return w.MessageSize }, list: func(w *Workload) []int { return w.MessageSizes },
		fill: func(w *Workload, v string) error { return atoiInto(&w.MessageSize)(v) }},
	{name: OptConcurrency, set: func(w *Workload) bool { return len(w.Concurrency) > 0 },
		list: func(w *Workload) []int { return w.Concurrency },
		fill: func(w *Workload, v string) error {
			w.Concurrency = []int{0}
			return atoiInto(&w.Concurrency[0])(v)
		}},
	{name: OptPods, set: func(w *Workload) bool { return w.Pods != 0 },
		scalar: func(w *Workload) int { return w.Pods }, list: func(*Workload) []int { return nil },
		fill: func(w *Workload, v string) error { return atoiInto(&w.Pods)(v) }},
	{name: OptRequests, set: func(w *Workload) bool { return w.Requests != 0 },
		scalar: func(w *Workload) int { return w.Requests }, list: func(*Workload) []int { return nil },
		fill: func(w *Workload, v string) error { return atoiInto(&w.Requests)(v) }},
	{name: OptSize, set: func(w *Workload) bool { return w.Size != "" },
		fill: func(w *Workload, v string) error { w.Size = v; return nil }},
	{name: OptBackground, set: func(w *Workload) bool { return w.Background != nil },
		fill: func(*Workload, string) error { return fmt.Errorf("background has no default value") }},
	{name: OptCPP, set: func(w *Workload) bool { return w.CPP },
		fill: func(w *Workload, v string) (err error) { w.CPP, err = strconv.ParseBool(v); return err }},
	{name: OptCounters, set: func(w *Workload) bool { return w.Counters },
		fill: func(w *Workload, v string) (err error) { w.Counters, err = strconv.ParseBool(v); return err }},
	{name: OptMSS, sweep: OptMSSes, set: func(w *Workload) bool { return w.MSS != 0 || len(w.MSSes) > 0 },
		scalar: func(w *Workload) int { return w.MSS }, list: func(w *Workload) []int { return w.MSSes },
		fill: func(w *Workload, v string) error { return atoiInto(&w.MSS)(v) }},
	{name: OptLossCeiling, set: func(w *Workload) bool { return w.LossCeiling != "" },
		fill: func(w *Workload, v string) error { w.LossCeiling = v; return nil }},
	{name: OptCeilingSrch, set: func(w *Workload) bool { return w.CeilingSearch != nil },
		fill: func(*Workload, string) error { return fmt.Errorf("ceilingSearch has no default value") }},
	{name: OptSender, set: func(w *Workload) bool { return w.Sender != "" },
		fill: func(w *Workload, v string) error { w.Sender = v; return nil }},
	{name: OptTarget, set: func(w *Workload) bool { return w.Target != "" },
		fill: func(w *Workload, v string) error { w.Target = v; return nil }},
}

func fieldOf(name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// SetOptions lists the options a workload sets, in field order, each by
// the name the study used (lengths for a length sweep). The default
// placement (inter-node) does not count as set.
func (w Workload) SetOptions() []string {
	var o []string
	add := func(set bool, name string) {
		if set {
			o = append(o, name)
		}
	}
	add(w.Length != "", OptLength)
	add(len(w.Lengths) > 0, OptLengths)
	add(w.Rate != "", OptRate)
	add(len(w.Rates) > 0, OptRates)
	add(w.Parallel != 0, OptParallel)
	add(len(w.Parallels) > 0, OptParallels)
	add(w.Reverse, OptReverse)
	add(w.Placement != "" && w.Placement != PlacementInterNode, OptPlacement)
	add(w.Pin != nil, OptPin)
	add(w.MessageSize != 0, OptMessageSize)
	add(len(w.MessageSizes) > 0, OptMsgSizes)
	add(len(w.Concurrency) > 0, OptConcurrency)
	add(w.Pods != 0, OptPods)
	add(w.Requests != 0, OptRequests)
	add(w.Size != "", OptSize)
	add(w.Background != nil, OptBackground)
	add(w.CPP, OptCPP)
	add(w.Counters, OptCounters)
	add(w.MSS != 0, OptMSS)
	add(len(w.MSSes) > 0, OptMSSes)
	add(w.Target != "", OptTarget)
	add(w.LossCeiling != "", OptLossCeiling)
	add(w.CeilingSearch != nil, OptCeilingSrch)
	add(w.Sender != "", OptSender)
	return o
}

// Tool returns the catalog's description of a tool.
func (c Catalog) Tool(name string) (spec.Tool, bool) {
	for _, t := range c.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return spec.Tool{}, false
}

// ToolNames lists the catalog's tools, sorted.
func (c Catalog) ToolNames() []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.Name)
	}
	sortStrings(out)
	return out
}

// toolDefaults fills each unset option that has a default in the tool's
// description (ab's size 5M, sockperf's 64 B messages). An unknown tool
// is left alone: Validate reports it.
func toolDefaults(w *Workload, cat Catalog) {
	t, ok := cat.Tool(w.Tool)
	if !ok {
		return
	}
	for _, o := range t.Options {
		f, ok := fieldOf(o.Name)
		if !ok || o.Default == "" || f.set(w) {
			continue
		}
		// A bad default is the driver's bug, caught by the registry's
		// test (CheckDefault).
		_ = f.fill(w, o.Default)
	}
}

// validateOptions checks the options a workload sets against its tool's
// description: accepted names, integer bounds, options a protocol needs.
func validateOptions(w *Workload, f string, t spec.Tool, bad badFunc) {
	allowed := t.OptionNames()
	for _, o := range w.SetOptions() {
		if !contains(allowed, o) {
			bad(f+"."+o, "tool %s has no option %s (%s takes: %s)", w.Tool, o, w.Tool, strings.Join(allowed, ", "))
		}
	}
	for _, o := range t.Options {
		fd, ok := fieldOf(o.Name)
		if !ok {
			continue
		}
		if o.Max > 0 && fd.list != nil {
			validateBounds(w, f, o, fd, bad)
		}
		if fd.set(w) && len(o.OnlyFor) > 0 && !contains(o.OnlyFor, w.Protocol) {
			bad(f+"."+o.Name, "%s is for %s tests only (%s), this workload is %s", o.Name,
				strings.ToUpper(strings.Join(o.OnlyFor, ", ")), o.Note, strings.ToUpper(w.Protocol))
		}
		if contains(o.RequiredFor, w.Protocol) && !fd.set(w) && !anySet(w, o.OrInstead) {
			name := o.Name
			if o.Sweep != "" {
				name += " or " + o.Sweep
			}
			bad(f+"."+o.Name, "a %s test needs %s (%s): %s", strings.ToUpper(w.Protocol), o.Doc, name, o.Note)
		}
	}
}

// anySet reports whether the workload sets any of the named options.
func anySet(w *Workload, names []string) bool {
	for _, n := range names {
		if f, ok := fieldOf(n); ok && f.set(w) {
			return true
		}
	}
	return false
}

// validateBounds checks each integer value of option o, naming the scalar
// or the list's element.
func validateBounds(w *Workload, f string, o spec.Option, fd field, bad badFunc) {
	check := func(field string, v int) {
		if lo, hi := o.MinOf(w.Protocol), o.MaxOf(w.Protocol); v < lo || v > hi {
			bad(field, "%s", boundMsg(o, w.Protocol, v))
		}
	}
	if fd.scalar != nil {
		if v := fd.scalar(w); v != 0 {
			check(f+"."+o.Name, v)
		}
	}
	list := o.Sweep
	if list == "" {
		list = o.Name
	}
	for i, v := range fd.list(w) {
		check(fmt.Sprintf("%s.%s[%d]", f, list, i), v)
	}
}

// boundMsg says that v is outside option o's bounds for protocol.
func boundMsg(o spec.Option, protocol string, v int) string {
	return fmt.Sprintf("%s must be between %d and %d (%s), got %d", o.Name, o.MinOf(protocol), o.MaxOf(protocol), o.Note, v)
}

// KnownOption reports whether name is an option (or its sweep's name) a Workload can carry, so
// the registry's test can reject a driver describing an option no study
// file can set.
func KnownOption(name string) bool {
	for _, f := range fields {
		if f.name == name || (f.sweep != "" && f.sweep == name) {
			return true
		}
	}
	return false
}

// CheckDefault reports whether a tool option's Default is a value its
// Workload field takes (Parse fills defaults without checking them: a bad
// one is the driver's bug, and the registry's test calls this).
func CheckDefault(o spec.Option) error {
	if o.Default == "" {
		return nil
	}
	f, ok := fieldOf(o.Name)
	if !ok {
		return fmt.Errorf("option %q is not a Workload field", o.Name)
	}
	var w Workload
	if err := f.fill(&w, o.Default); err != nil {
		return fmt.Errorf("option %s: default %q: %w", o.Name, o.Default, err)
	}
	return nil
}
