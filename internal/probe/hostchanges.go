package probe

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"
)

// The kernel probes try each feature by making it in a scratch namespace,
// and making a device of a kind whose module is not loaded yet makes the
// kernel load it (ipip, ip_gre, vxlan, openvswitch by tryOVS's modprobe):
// a change to the host that outlives the probe, and that a dry run,
// which otherwise changes nothing, must own up to. What the probes of
// this process loaded is kept here (moduleLog), beside the devices some of
// those modules added to the host's namespace (hostEffectNote).

// moduleLog is what this process's probes changed on the host; guarded by
// cache's mutex, as the probes that fill it run under it.
var moduleLog struct {
	loaded  []string // modules, in the order the probes loaded them
	devices []string // hostEffectNote's notes of devices added
}

// HostChanges says, one sentence each, what this process's probes
// changed on the host: the kernel modules that were loaded while they
// ran, and the devices those added to the host's namespace. Empty when
// they changed nothing. A module is read from /proc/modules around each
// probe, which cannot tell the probe's loads from another process's at
// the same moment (a run's, a container's), so the sentence says so.
func HostChanges() []string {
	cache.Lock()
	defer cache.Unlock()
	var out []string
	if len(moduleLog.loaded) > 0 {
		out = append(out, "module(s) "+strings.Join(moduleLog.loaded, ", ")+" were loaded while the study's kernel features were probed "+
			"(by the probes, which load the modules of what they try, unless something else on this machine loaded one at the same moment; "+
			"they stay loaded until unloaded, as after a run)")
	}
	return append(out, moduleLog.devices...)
}

// noteLoaded records the modules in after and not in before, and note
// when it says what a module added to the host.
func noteLoaded(before, after map[string]bool, feature, note string) {
	for m := range after {
		if !before[m] && !slices.Contains(moduleLog.loaded, m) {
			moduleLog.loaded = append(moduleLog.loaded, m)
		}
	}
	slices.Sort(moduleLog.loaded)
	if strings.HasPrefix(note, "probing it loaded") {
		moduleLog.devices = append(moduleLog.devices, feature+": "+note)
	}
}

// loadedModules reads the names of the loaded modules (/proc/modules);
// nil when it cannot, so nothing then counts as loaded by a probe.
func loadedModules() map[string]bool {
	f, err := os.Open("/proc/modules")
	if err != nil {
		return nil
	}
	defer f.Close()
	m, err := parseModules(f)
	if err != nil {
		return nil
	}
	return m
}

// parseModules reads /proc/modules: a module per line, its name the
// first field ("vxlan 106496 0 - Live 0x0000000000000000").
func parseModules(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if name, _, _ := strings.Cut(sc.Text(), " "); name != "" {
			out[name] = true
		}
	}
	return out, sc.Err()
}
