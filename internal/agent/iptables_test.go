package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSaves puts iptables-save programs printing the given outputs on
// PATH, alone (printf is the shell's own).
func fakeSaves(t *testing.T, outs map[string]string) {
	dir := t.TempDir()
	for prog, out := range outs {
		if err := os.WriteFile(filepath.Join(dir, prog), []byte("#!/bin/sh\nprintf '%s' '"+out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// A node whose kube-proxy writes legacy rules is counted with
// iptables-legacy-save, not the image's default (nf_tables) iptables-save,
// which saw Docker's one rule alone; the note says so.
func TestIptablesCountsPicksBackend(t *testing.T) {
	legacy := "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-SERVICES -j RETURN\nCOMMIT\n"
	nft := "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -j DOCKER\nCOMMIT\n"
	fakeSaves(t, map[string]string{"iptables-save": nft, "iptables-nft-save": nft, "iptables-legacy-save": legacy})
	counts, from, err := iptablesCounts()
	if err != nil || counts["rules"] != 2 || counts["chains"] != 3 {
		t.Fatalf("counts %v, %v: want the legacy backend's 3 chains, 2 rules", counts, err)
	}
	if !strings.HasPrefix(from, "iptables-legacy-save; iptables-nft-save holds 1 rules too, not counted") {
		t.Errorf("from %q", from)
	}
	// An image with the default program alone reads it, as before.
	fakeSaves(t, map[string]string{"iptables-save": nft})
	if counts, from, err := iptablesCounts(); err != nil || counts["rules"] != 1 || from != "iptables-save" {
		t.Errorf("default alone: %v, %q, %v", counts, from, err)
	}
	fakeSaves(t, map[string]string{})
	if _, _, err := iptablesCounts(); err != errNoIptables {
		t.Errorf("none: %v", err)
	}
}
