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
	if len(changes) != 2 || !strings.Contains(changes[0], "loaded module(s) ipip, tunnel4") {
		t.Errorf("HostChanges %q", changes)
	}
}
