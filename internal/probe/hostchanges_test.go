package probe

import (
	"slices"
	"strings"
	"testing"
)

func TestParseModules(t *testing.T) {
	m, err := parseModules(strings.NewReader("vxlan 106496 0 - Live 0x0000000000000000\n" +
		"ip6_udp_tunnel 16384 1 vxlan, Live 0x0000000000000000\n\nveth 36864 0 - Live 0x0000000000000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || !m["vxlan"] || !m["ip6_udp_tunnel"] || !m["veth"] {
		t.Errorf("modules: %v", m)
	}
}

func FuzzParseModules(f *testing.F) {
	f.Add("vxlan 106496 0 - Live 0x0000000000000000\n")
	f.Add(" x\n\x00\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := parseModules(strings.NewReader(text))
		if err != nil {
			return
		}
		for name := range m {
			if name == "" || strings.ContainsAny(name, " \n") {
				t.Errorf("module name %q from %q", name, text)
			}
		}
	})
}

// A probe's modules are those that appeared during it, each once and
// sorted; devices a module added are said with their feature.
func TestNoteLoaded(t *testing.T) {
	cache.Lock()
	saved := moduleLog
	moduleLog.loaded, moduleLog.devices = nil, nil
	noteLoaded(map[string]bool{"veth": true}, map[string]bool{"veth": true, "ipip": true, "tunnel4": true}, IPIP,
		"probing it loaded a module that added tunl0 to every network namespace, the host's included (until the module is unloaded)")
	noteLoaded(map[string]bool{"veth": true, "ipip": true, "tunnel4": true}, map[string]bool{"veth": true, "ipip": true, "tunnel4": true}, GRE, "")
	got := slices.Clone(moduleLog.loaded)
	devices := slices.Clone(moduleLog.devices)
	cache.Unlock()
	changes := HostChanges()
	cache.Lock()
	moduleLog = saved
	cache.Unlock()
	if !slices.Equal(got, []string{"ipip", "tunnel4"}) {
		t.Errorf("loaded %v, want [ipip tunnel4]", got)
	}
	if len(devices) != 1 || !strings.HasPrefix(devices[0], IPIP+": probing it loaded a module that added tunl0") {
		t.Errorf("devices %q", devices)
	}
	// /proc/modules read around a probe cannot tell its loads from
	// another process's: the sentence says so.
	if len(changes) != 2 || !strings.Contains(changes[0], "module(s) ipip, tunnel4 were loaded while") ||
		!strings.Contains(changes[0], "unless something else on this machine loaded one") {
		t.Errorf("HostChanges %q", changes)
	}
}

// TestProbeNoteOwnDevicesOnly: a link that appears in the host's
// namespace while a feature is probed is the probe's doing only when its
// module makes it (hostEffects): a veth a container or a run adds meanwhile
// was reported as "probing it loaded a module that added" it.
func TestProbeNoteOwnDevicesOnly(t *testing.T) {
	before := map[string]bool{"lo": true}
	if n := probeNote(Veth, before, map[string]bool{"lo": true, "vethabc": true}); n != "" {
		t.Errorf("veth probe, vethabc appeared meanwhile: note %q", n)
	}
	n := probeNote(GRE, before, map[string]bool{"lo": true, "gre0": true, "docker0": true})
	if !strings.Contains(n, "added gre0 to") || strings.Contains(n, "docker0") {
		t.Errorf("gre probe, gre0 and docker0 appeared: note %q", n)
	}
	if n := probeNote(IPIP, before, before); !strings.Contains(n, "probing it loads module ipip") {
		t.Errorf("ipip probe, nothing appeared: note %q", n)
	}
}
