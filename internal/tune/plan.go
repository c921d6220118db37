package tune

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// Plan returns the writes a tuning makes on a target, in the order Apply
// makes them: the global RFS table first, then the sysctls
// (sysctlChanges), then the idle latency limit of the target's CPUs
// (idleChanges), then per device and receive queue rps_cpus and
// rps_flow_cnt, node devices before pod devices. A baseline tuning plans
// nothing. Plan only reads: it lists queue directories, looks for
// sysctls and reads the CPUs' idle states.
func Plan(t study.Tuning, tgt Target, fs FS) ([]Change, error) {
	if t.IsBaseline() {
		return nil, nil
	}
	var mask string
	if t.RPS != nil {
		cpus, err := ResolveCPUs(t.RPS.CPUs, tgt)
		if err != nil {
			return nil, fmt.Errorf("tuning %s: %w", t.Name, err)
		}
		mask = cpus.Mask(tgt.CPUs[len(tgt.CPUs)-1] + 1)
	}
	var flowCnt string
	var out []Change
	if t.RFS != nil {
		for _, v := range []struct {
			name string
			n    int
		}{{"sockFlowEntries", t.RFS.SockFlowEntries}, {"flowCnt", t.RFS.FlowCnt}} {
			if err := checkTableSize(v.n); err != nil {
				return nil, fmt.Errorf("tuning %s: rfs %s: %w", t.Name, v.name, err)
			}
		}
		out = append(out, Change{FS: FSProc, Path: SockFlowEntriesPath, Value: strconv.Itoa(t.RFS.SockFlowEntries)})
		flowCnt = strconv.Itoa(t.RFS.FlowCnt)
	}
	sysctls, err := sysctlChanges(t, tgt, fs)
	if err != nil {
		return nil, fmt.Errorf("tuning %s: %w", t.Name, err)
	}
	out = append(out, sysctls...)
	idle, err := idleChanges(t, tgt, fs)
	if err != nil {
		return nil, fmt.Errorf("tuning %s: %w", t.Name, err)
	}
	out = append(out, idle...)
	ifaces := slices.Clone(tgt.NodeIfaces)
	if t.Pods {
		ifaces = append(ifaces, tgt.PodIfaces...)
	}
	for _, ifc := range ifaces {
		queues, err := RxQueues(fs, ifc)
		if err != nil {
			return nil, fmt.Errorf("tuning %s: %w", t.Name, err)
		}
		for _, q := range queues {
			if mask != "" {
				out = append(out, Change{Netns: ifc.Netns, FS: FSSysfs, Path: path.Join(q, "rps_cpus"), Value: mask})
			}
			if flowCnt != "" {
				out = append(out, Change{Netns: ifc.Netns, FS: FSSysfs, Path: path.Join(q, "rps_flow_cnt"), Value: flowCnt})
			}
		}
	}
	return out, nil
}

// ResolveCPUs turns an RPS CPU selector into CPUs: "all" is every CPU of
// the target, "all-but-softirq-core" all but Target.SoftIRQCore (the
// highest CPU when unknown), anything else a CPU list within the target.
func ResolveCPUs(sel string, tgt Target) (cpuset.Set, error) {
	if len(tgt.CPUs) == 0 {
		return nil, fmt.Errorf("rps cpus %q: target has no CPUs", sel)
	}
	switch sel {
	case study.CPUsAll:
		return tgt.CPUs, nil
	case study.CPUsAllButSoftIRQ:
		core := tgt.SoftIRQCore
		if core < 0 {
			core = tgt.CPUs[len(tgt.CPUs)-1]
		}
		if !tgt.CPUs.Contains(core) {
			return nil, fmt.Errorf("rps cpus %q: softirq core %d is not one of the machine's CPUs %s", sel, core, tgt.CPUs)
		}
		rest := tgt.CPUs.Without(core)
		if len(rest) == 0 {
			return nil, fmt.Errorf("rps cpus %q: the machine has only CPU %d, none is left", sel, core)
		}
		return rest, nil
	}
	cpus, err := cpuset.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("rps cpus: %w", err)
	}
	for _, c := range cpus {
		if !tgt.CPUs.Contains(c) {
			return nil, fmt.Errorf("rps cpus %q: CPU %d is not one of the machine's CPUs %s", sel, c, tgt.CPUs)
		}
	}
	return cpus, nil
}

// checkTableSize rejects RFS sizes the kernel would silently round up to a
// power of two, so what a report says was set is what the kernel holds.
func checkTableSize(n int) error {
	if n < 0 {
		return fmt.Errorf("%d is negative", n)
	}
	if n&(n-1) != 0 {
		p := 1
		for p < n {
			p <<= 1
		}
		return fmt.Errorf("%d is not a power of two; the kernel would use %d", n, p)
	}
	return nil
}

// RxQueues returns the sysfs directories of a device's receive queues
// ("class/net/eth0/queues/rx-0", ...), in queue order.
func RxQueues(fs FS, ifc netns.Iface) ([]string, error) {
	if ifc.Name == "" || strings.ContainsAny(ifc.Name, "/") || ifc.Name == "." || ifc.Name == ".." {
		return nil, fmt.Errorf("device %q: %w", ifc.Name, ErrBadPath)
	}
	dir := path.Join("class/net", ifc.Name, "queues")
	names, err := fs.List(ifc.Netns, FSSysfs, dir)
	if err != nil {
		return nil, fmt.Errorf("list receive queues of %s: %w", ifaceString(ifc), err)
	}
	var nums []int
	for _, n := range names {
		if i, ok := rxQueueNumber(n); ok {
			nums = append(nums, i)
		}
	}
	if len(nums) == 0 {
		return nil, fmt.Errorf("%s has no receive queues in sysfs: %w", ifaceString(ifc), ErrNotSupported)
	}
	slices.Sort(nums)
	// A directory lists a name once; a listing that repeats one (an
	// agent's, relayed) must not make a queue's knobs written twice.
	nums = slices.Compact(nums)
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = path.Join(dir, "rx-"+strconv.Itoa(n))
	}
	return out, nil
}

// rxQueueNumber reads a receive queue's directory name as the kernel
// writes it, "rx-%u" (net/core/net-sysfs.c): a plain decimal without
// sign or leading zero. Any other entry is not a queue and is skipped,
// like tx-0: strconv.Atoi alone would read rx-01 or rx-+1 as queue 1,
// and the returned path, rebuilt from the number, would name a queue
// the listing never held.
func rxQueueNumber(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "rx-")
	if !ok || s == "" || (s[0] == '0' && s != "0") {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

func ifaceString(ifc netns.Iface) string {
	if ifc.Netns == "" {
		return ifc.Name + " (host)"
	}
	return ifc.Name + " in " + ifc.Netns
}

// maskFiles are the knobs whose value is a CPU mask, by file name
// (study.MaskKnobs): a tuning's value and the kernel's are compared as
// CPU sets.
var maskFiles = study.MaskKnobs

// IsMask reports whether the knob at path holds a CPU mask (maskFiles).
func IsMask(p string) bool { return maskFiles[path.Base(p)] }

// Equal compares two values of the knob at path by meaning: masks
// (IsMask) as CPU sets, everything else as whitespace-separated fields
// (numbers as numbers).
func Equal(p, a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if IsMask(p) {
		sa, err1 := cpuset.ParseMask(a)
		sb, err2 := cpuset.ParseMask(b)
		return err1 == nil && err2 == nil && slices.Equal(sa, sb)
	}
	// A sysctl of several values prints them tab-separated, however
	// they were written ("4096 131072 6291456").
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		na, err1 := strconv.ParseInt(fa[i], 10, 64)
		nb, err2 := strconv.ParseInt(fb[i], 10, 64)
		if err1 == nil && err2 == nil {
			if na != nb {
				return false
			}
		} else if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

// sysctlChanges are the writes of t's sysctls, in name order, where the
// kernel keeps each: one the server node's namespace has (or, on a real
// node whose namespace is the host's, a measured pod's) is that
// namespace's own (net.ipv4.tcp_rmem) and is written there, and with
// Tuning.Pods in every measured server pod's namespace too; one it lacks
// is global (net.core.busy_read exists in the initial namespace only)
// and is written once on the host, and so is one it shows read-only
// (net.netfilter.nf_conntrack_max: the host's value, perNamespace). Whether the host has it at all is
// preflight's question (probe.Sysctl).
func sysctlChanges(t study.Tuning, tgt Target, fs FS) ([]Change, error) {
	var out []Change
	var hostDevs []string
	for _, name := range slices.Sorted(maps.Keys(t.Sysctls)) {
		p, v := study.SysctlPath(name), t.Sysctls[name]
		if why := study.RefusedSysctl(name); why != "" {
			// Validation refuses it; were one to come through, a node
			// without the device would make it look global (below),
			// and the host's own device would be changed.
			return nil, fmt.Errorf("sysctl %s: %s: %w", name, why, ErrBadPath)
		}
		perNS, err := perNamespace(p, tgt, fs)
		if err != nil {
			return nil, fmt.Errorf("sysctl %s: %w", name, err)
		}
		if !perNS {
			// Written on the host: never one of the host's devices, by a
			// tree of device sysctls DeviceSysctl does not know.
			if hostDevs == nil {
				if hostDevs, err = hostDevices(fs); err != nil {
					return nil, fmt.Errorf("sysctl %s: %w", name, err)
				}
			}
			if dev := deviceIn(name, hostDevs); dev != "" {
				return nil, fmt.Errorf("sysctl %s: names the host's device %s, whose settings are not a tuning's to change: %w", name, dev, ErrBadPath)
			}
			out = append(out, Change{FS: FSProc, Path: p, Value: v})
			continue
		}
		out = append(out, Change{Netns: tgt.NodeNetns, FS: FSProc, Path: p, Value: v})
		if t.Pods {
			for _, ifc := range tgt.PodIfaces {
				out = append(out, Change{Netns: ifc.Netns, FS: FSProc, Path: p, Value: v})
			}
		}
	}
	return out, nil
}

// hostDevices names the host's network devices (its sysfs class/net).
func hostDevices(fs FS) ([]string, error) {
	devs, err := fs.List("", FSSysfs, "class/net")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list the host's devices: %w", err)
	}
	return append(devs, ""), nil // not nil: listed
}

// deviceIn is the device of devs that a segment of the dotted sysctl
// name names, "" when none.
func deviceIn(name string, devs []string) string {
	for _, seg := range strings.Split(name, ".")[1:] {
		if seg != "" && slices.Contains(devs, seg) {
			return seg
		}
	}
	return ""
}

// hostValueInNetns are sysctls the kernel shows in every network
// namespace but lets only the initial one write: a child namespace (of
// the initial user namespace) reads the host's value, 0444
// (nf_conntrack_max and its table sizes; the socket buffer limits
// net.core.{r,w}mem_{default,max} since Linux 6.15, which older kernels
// keep in the initial namespace alone; the congestion controls
// unprivileged sockets may pick). They are the host's values, global as
// net.core.netdev_max_backlog is. An FS that can tell (WritableFS) finds
// any such sysctl by its mode; this list stands in for one that cannot
// (a node's agent).
var hostValueInNetns = map[string]bool{
	"/proc/sys/net/core/rmem_default":                   true,
	"/proc/sys/net/core/rmem_max":                       true,
	"/proc/sys/net/core/wmem_default":                   true,
	"/proc/sys/net/core/wmem_max":                       true,
	"/proc/sys/net/ipv4/tcp_allowed_congestion_control": true,
	"/proc/sys/net/netfilter/nf_conntrack_buckets":      true,
	"/proc/sys/net/netfilter/nf_conntrack_expect_max":   true,
	"/proc/sys/net/netfilter/nf_conntrack_max":          true,
}

// perNamespace reports whether the sysctl file p belongs to each network
// namespace: whether a namespace other than the host's shows it, and
// may write it. One it shows read-only is the host's value mirrored
// (hostValueInNetns), which only the host can set: written in the node's
// namespace it failed mid-run with "permission denied".
func perNamespace(p string, tgt Target, fs FS) (bool, error) {
	ns := tgt.NodeNetns
	if ns == "" && len(tgt.PodIfaces) > 0 {
		ns = tgt.PodIfaces[0].Netns
	}
	if ns == "" {
		// Nothing but the host to look at: written there either way.
		return true, nil
	}
	_, err := fs.Read(ns, FSProc, p)
	switch {
	case errors.Is(err, ErrNoSysctl):
		return false, nil
	case err != nil:
		return false, err
	}
	// The file's mode first: a kernel that gives a listed sysctl a
	// namespace's own writable copy (as a later one may the socket buffer
	// limits) must have it written there, where the run's sockets read it.
	if w, ok := fs.(WritableFS); ok {
		return w.Writable(ns, FSProc, p)
	}
	return !hostValueInNetns[p], nil
}

// idleChanges bound, on each of the target's CPUs, the exit latency of
// the idle states it may enter, through its PM QoS resume latency limit
// (cpuidle.LimitPath). The limits are the machine's (the host's sysfs,
// netns ""): on the local engine every node's CPUs are this machine's,
// and on a cluster the node's own.
func idleChanges(t study.Tuning, tgt Target, fs FS) ([]Change, error) {
	if t.CPUIdle == nil {
		return nil, nil
	}
	maxUS := t.CPUIdle.MaxExitLatencyUS()
	r := HostSysfs(fs)
	var out []Change
	bounds := false
	for _, cpu := range tgt.CPUs {
		states, err := cpuidle.States(r, cpu)
		if errors.Is(err, cpuidle.ErrNone) {
			return nil, fmt.Errorf("cpuIdle: %w: %w", err, ErrNotSupported)
		}
		if err != nil {
			return nil, fmt.Errorf("cpuIdle: %w", err)
		}
		bounds = bounds || len(cpuidle.Slower(states, maxUS)) > 0
		out = append(out, Change{FS: FSSysfs, Path: cpuidle.LimitPath(cpu), Value: cpuidle.LimitValue(maxUS)})
	}
	if !bounds {
		// A tuning that changes nothing would be measured as if it did
		// something: refuse it where the user can see why.
		return nil, fmt.Errorf("cpuIdle: no enabled idle state of CPUs %s exits slower than %d µs: the limit would change nothing", tgt.CPUs, maxUS)
	}
	return out, nil
}

// HostSysfs reads the host's sysfs through an FS, for package cpuidle: a
// cluster node's through its agent.
func HostSysfs(fs FS) cpuidle.Reader { return hostSysfs{fs} }

type hostSysfs struct{ fs FS }

func (h hostSysfs) Read(p string) (string, error)     { return h.fs.Read("", FSSysfs, p) }
func (h hostSysfs) List(dir string) ([]string, error) { return h.fs.List("", FSSysfs, dir) }
