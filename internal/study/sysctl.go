package study

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A tuning's sysctls: which a tuning may set, and what is wrong with a
// setting before anything is written (checkSysctl).

// SysctlOwned are the sysctls another tuning field sets: a tuning's
// sysctls may not set them too (two writers of one value would revert
// each other out of order).
var SysctlOwned = map[string]string{"net.core.rps_sock_flow_entries": "rfs.sockFlowEntries"}

// sysctlNameRE is a network sysctl by its dotted name: "net." and
// segments of letters, digits, '_' and '-', so that its /proc/sys path
// (dots as slashes) can name nothing else. A device's own settings
// (net.ipv4.conf.DEV.*) are left out: the run's devices are its own, and
// "all" and "default" reach them.
var sysctlNameRE = regexp.MustCompile(`^net(\.[A-Za-z0-9_-]+)+$`)

// IsSysctlName says whether name is a network sysctl's dotted name as a
// tuning may give it (the node agent checks its writes by it too).
func IsSysctlName(name string) bool { return sysctlNameRE.MatchString(name) }

// deviceSysctlRE is a sysctl of one device: net.ipv4.conf.DEV.*,
// net.ipv6.neigh.DEV.*, net.mpls.conf.DEV.*, net.decnet.conf.DEV.*
// (before Linux 6.1), net.ax25.DEV.* (DEV "all" and "default" are not
// devices). The name matches no file in a node's namespace that has no
// such device (AX.25's exist in the initial namespace only), so tune.Plan
// would take it for a global sysctl and write it on the host:
// net.ipv4.conf.eth0.rp_filter changed the host's own uplink. tune.Plan
// also refuses a "global" name with a segment naming a host device.
var deviceSysctlRE = regexp.MustCompile(`^net\.(?:(?:ipv4|ipv6|mpls|decnet)\.(?:conf|neigh)|ax25)\.([^.]+)\.`)

// DeviceSysctl says whether name is one device's own sysctl, and names
// the device.
func DeviceSysctl(name string) (dev string, ok bool) {
	m := deviceSysctlRE.FindStringSubmatch(name)
	if m == nil || m[1] == "all" || m[1] == "default" {
		return "", false
	}
	return m[1], true
}

// refusedSysctlRE are network sysctls that are not a network tuning's:
// the BPF JIT's hardening and limits (net.core.bpf_jit_*, the initial
// namespace's only) are the host's security settings, and a study
// lowering them for its trials would weaken the machine while it runs.
var refusedSysctlRE = regexp.MustCompile(`^net\.core\.bpf_jit_`)

// RefusedSysctl says why a network sysctl is not a tuning's to set (""
// when it may be): a device's own, or a security setting. The node agent
// refuses the same names (its last line of defence on a cluster node).
func RefusedSysctl(name string) string {
	if dev, ok := DeviceSysctl(name); ok {
		// The neighbour tables have a default and no "all"
		// (/proc/sys/net/ipv4/neigh/default); conf has both.
		instead := strings.Replace(name, "."+dev+".", ".all.", 1) + " (or .default.)"
		if strings.Contains(name, ".neigh."+dev+".") {
			instead = strings.Replace(name, "."+dev+".", ".default.", 1)
		}
		return fmt.Sprintf("%s is device %s's own setting; a run's devices are its own, and the host's are not a tuning's to change: "+
			"set %s to reach the run's devices", name, dev, instead)
	}
	if refusedSysctlRE.MatchString(name) {
		return fmt.Sprintf("%s is the BPF JIT's hardening or limit, a security setting of the host, not a network tuning", name)
	}
	return ""
}

// Bounds of a tuning's sysctls.
const (
	MaxSysctls     = 32
	maxSysctlName  = 128
	maxSysctlValue = 256
)

// Sysctls whose value is the name of a queueing discipline or a TCP
// congestion control (kernel objects, some in modules): such names are
// lower-case letters, digits and '_' (fq_codel, pfifo_fast, bbr, dctcp).
var (
	moduleValued = map[string]struct{ what, listedBy string }{
		"net.core.default_qdisc":          {"queueing discipline", "tc qdisc help"},
		"net.ipv4.tcp_congestion_control": {"TCP congestion control", "net.ipv4.tcp_available_congestion_control"},
	}
	moduleNameRE = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// SysctlPath is a network sysctl's file: its dotted name with slashes
// under /proc/sys (sysctlNameRE allows no other characters that would
// mean something in a path).
func SysctlPath(name string) string { return "/proc/sys/" + strings.ReplaceAll(name, ".", "/") }

// checkSysctl says what is wrong with a sysctl setting, "" when nothing.
func checkSysctl(name, value string) string {
	switch {
	case len(name) > maxSysctlName:
		return fmt.Sprintf("%q is %d bytes; at most %d", name[:32]+"...", len(name), maxSysctlName)
	case !sysctlNameRE.MatchString(name):
		return fmt.Sprintf("%q is not a network sysctl: want net.SECTION.NAME (letters, digits, '_', '-'; as sysctl -a prints it)", name)
	case RefusedSysctl(name) != "":
		return RefusedSysctl(name)
	case SysctlOwned[name] != "":
		return fmt.Sprintf("%s is set by %s; set it there", name, SysctlOwned[name])
	case value == "":
		return fmt.Sprintf("%s: the value is empty", name)
	case len(value) > maxSysctlValue:
		return fmt.Sprintf("%s: the value is %d bytes; at most %d", name, len(value), maxSysctlValue)
	case strings.IndexFunc(value, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) >= 0:
		return fmt.Sprintf("%s: the value %q has a control character; several values are separated by spaces", name, value)
	case moduleValued[name].what != "" && !moduleNameRE.MatchString(value):
		// The value names a module's qdisc or algorithm, which the
		// preflight probe looks up by that name (probe.SysctlValue).
		return fmt.Sprintf("%s: %q is not a %s name: want lower-case letters, digits and '_' (as %s lists them)",
			name, value, moduleValued[name].what, moduleValued[name].listedBy)
	case yamlBools[strings.ToLower(value)] != "":
		return fmt.Sprintf("%s: %q is a YAML boolean, a word to the kernel, which wants a number (the first trial's write would fail, EINVAL): write %s",
			name, value, yamlBools[strings.ToLower(value)])
	}
	if why := sysctlPlainNumbers(name, value); why != "" {
		return why
	}
	return sysctlRadix(name, value)
}

// numberLikeRE is a word written as a number the way people write them
// and the kernel does not read them: a fraction or exponent ("0.5",
// "1e6") or a unit suffix ("16M", "4KiB", "10ms", "50%"). A plain
// integer matches too; sysctlPlainNumbers lets those through.
var (
	numberLikeRE = regexp.MustCompile(`^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?((?:[kKmMgGtTpP]i?)?[bB]?|[mun]?s|%)$`)
	plainIntRE   = regexp.MustCompile(`^[+-]?\d+$`)
)

// sysctlPlainNumbers refuses a word of a sysctl's value that reads as a
// number with a fraction or a unit: the kernel parses a sysctl's numbers
// as plain integers (proc_get_long), so "16M" or "0.5" is refused by
// every trial's write (EINVAL), after the nodes are built. Each word is
// checked: tcp_rmem's "4096 131072 16M" is three numbers. A mask's hex
// ("0f") and a module's name (bbr) are not numbers.
func sysctlPlainNumbers(name, value string) string {
	if MaskKnobs[name[strings.LastIndexByte(name, '.')+1:]] || moduleValued[name].what != "" {
		return ""
	}
	for _, f := range strings.Fields(value) {
		m := numberLikeRE.FindStringSubmatch(f)
		if m == nil || plainIntRE.MatchString(f) {
			continue
		}
		if m[1] != "" {
			return fmt.Sprintf("%s: %q: %s has a unit, which the kernel does not read (every trial's write would fail, EINVAL): write the number plainly, in the sysctl's own unit (16M of bytes is 16777216)",
				name, value, f)
		}
		return fmt.Sprintf("%s: %q: %s is not a whole number, and the kernel reads a sysctl's numbers as integers (every trial's write would fail, EINVAL): write the number plainly, in digits",
			name, value, f)
	}
	return ""
}

// MaskKnobs are the knobs whose value is a CPU mask, by file name (a
// sysctl's last part): the kernel reads a short one ("f", "0f") in hex
// and prints it zero-padded to its CPU count, in comma-separated 32-bit
// words ("00000000,0000000f"). Queues' rps_cpus, xps_cpus and xps_rxqs
// (sysfs); the sysctls net.core.rps_default_mask and
// net.core.flow_limit_cpu_bitmap; an IRQ's smp_affinity.
var MaskKnobs = map[string]bool{
	"rps_cpus": true, "xps_cpus": true, "xps_rxqs": true,
	"rps_default_mask": true, "flow_limit_cpu_bitmap": true, "smp_affinity": true,
}

// sysctlRadix refuses a sysctl number written in another base than ten:
// the kernel reads a sysctl's numbers as C does (proc_get_long's
// strtoul_lenient with base 0), so "050" is 40 and "0x10" 16, and reads
// them back in decimal, which the tuning's read-back then finds changed:
// every trial of the tuning failed.
func sysctlRadix(name, value string) string {
	if MaskKnobs[name[strings.LastIndexByte(name, '.')+1:]] {
		return "" // hex whatever its leading 0s: "0f", "00000000,0000000f"
	}
	for _, f := range strings.Fields(value) {
		digits := strings.TrimLeft(f, "+-")
		if len(digits) < 2 || digits[0] != '0' {
			continue
		}
		v, err := strconv.ParseInt(f, 0, 64)
		if err != nil {
			return fmt.Sprintf("%s: %q: the kernel reads a number with a leading 0 in another base than ten (%s is no octal number: it would refuse the write, EINVAL); write it in decimal without the leading 0",
				name, value, f)
		}
		return fmt.Sprintf("%s: %q: the kernel reads a number with a leading 0 in another base than ten (%s is %d) and gives it back in decimal; write %d",
			name, value, f, v, v)
	}
	return ""
}

// yamlBools are YAML's boolean words (YAML 1.1's, which authors write
// for on and off; any case) and the number a sysctl takes for each. A
// sysctl's value is text, kept as written (`tcp_timestamps: false` is
// "false"); the kernel reads a number and refuses the word, after the
// nodes are built and the baseline trials ran. No network sysctl takes
// these words.
var yamlBools = map[string]string{"true": "1", "yes": "1", "on": "1", "false": "0", "no": "0", "off": "0"}
