package iptables

import (
	"bufio"
	"bytes"
	"strings"
)

// The iptables-save programs: the default (whichever backend the
// image's alternatives point at: Debian bookworm's is nf_tables) and
// each backend's own. A node's kube-proxy and CNI may write through
// either backend, and each program sees its own backend's rules alone.
const (
	Save       = "iptables-save"
	LegacySave = "iptables-legacy-save"
	NftSave    = "iptables-nft-save"
)

// markers are the chains kubelet and kube-proxy create in the backend
// they use, which kube-proxy's image (iptables-wrapper) reads first to
// pick its own backend.
var markers = []string{":KUBE-IPTABLES-HINT ", ":KUBE-KUBELET-CANARY "}

// PickSave says which backend holds the node's rules, from both
// backends' saves (nil where the program is missing or failed), as
// kube-proxy's iptables-wrapper decides (kubernetes-sigs/iptables-wrappers):
// the backend with kubelet's marker chains, nf_tables first; else the
// one with more rules. Where neither holds a rule (or neither could be
// read) it is Save, the default, as before both were read. other is the
// program of the backend not picked where that one holds rules too
// (otherRules of them, which what save reads leaves out), "" where not.
func PickSave(legacy, nft []byte) (save, other string, otherRules int) {
	ln, nn := summary(legacy), summary(nft)
	switch {
	case nn.marked:
		save = NftSave
	case ln.marked:
		save = LegacySave
	case ln.rules == 0 && nn.rules == 0:
		return Save, "", 0
	case ln.rules > nn.rules:
		save = LegacySave
	default:
		save = NftSave
	}
	left, prog := nn, NftSave
	if save == NftSave {
		left, prog = ln, LegacySave
	}
	if left.rules == 0 {
		return save, "", 0
	}
	return save, prog, left.rules
}

type saveSummary struct {
	rules  int
	marked bool
}

// summary counts a save's rules and finds kubelet's marker chains.
func summary(out []byte) saveSummary {
	var s saveSummary
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-A ") || (strings.HasPrefix(line, "[") && strings.Contains(line, "] -A ")) {
			s.rules++
		}
		for _, m := range markers {
			if strings.HasPrefix(line, m) {
				s.marked = true
			}
		}
	}
	return s
}
