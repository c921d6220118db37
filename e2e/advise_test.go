package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// adviseState is what `cnibench advise` must not change: sysctls it
// reads, the NICs' links, steering files and offloads.
func adviseState(t *testing.T) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, p := range []string{sockFlow, "/proc/sys/net/core/busy_poll", "/proc/sys/net/core/busy_read",
		"/proc/sys/net/netfilter/nf_conntrack_max"} {
		if b, err := os.ReadFile(p); err == nil {
			s[p] = strings.TrimSpace(string(b))
		}
	}
	nics, _ := filepath.Glob("/sys/class/net/*/device")
	for _, d := range nics {
		dev := filepath.Base(filepath.Dir(d))
		out, _ := exec.Command("ip", "-o", "link", "show", "dev", dev).Output()
		s["ip link "+dev] = string(out)
		out, _ = exec.Command("ethtool", "-k", dev).Output()
		s["ethtool -k "+dev] = string(out)
		files, _ := filepath.Glob("/sys/class/net/" + dev + "/queues/rx-*/rps_*")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			s[f] = strings.TrimSpace(string(b))
		}
	}
	return s
}

func TestAdviseWritesPagesAndChangesNothing(t *testing.T) {
	before := adviseState(t)
	out := filepath.Join(t.TempDir(), "advice")
	r := cnibench(t, nil, "advise", "--out", out)
	if r.code != 0 {
		t.Fatalf("advise exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"advice.md", "advice.html", "advice.json", "inspection.json"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(r.stdout, "## What was found") || !strings.Contains(r.stdout, "## Rules that do not apply") {
		t.Errorf("stdout is not the Markdown page:\n%s", r.stdout)
	}
	var rep struct {
		Candidates []struct{ Measured, Verdict string } `json:"candidates"`
		Inspection struct {
			CPUs int `json:"cpus"`
		} `json:"inspection"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "advice.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Inspection.CPUs < 1 {
		t.Errorf("inspection found no CPU: %s", b)
	}
	for _, c := range rep.Candidates {
		if c.Measured != "not proven: run with --prove" || c.Verdict != c.Measured {
			t.Errorf("candidate claims a measurement: %+v", c)
		}
	}
	after := adviseState(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q -> %q", k, v, after[k])
		}
	}
}

func TestAdviseBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"advise", "--rule", "nope"},
		{"advise", "--prove"},
		{"advise", "--engine", "kube"},
		{"advise", "--engine", "vm"},
	} {
		out := filepath.Join(t.TempDir(), "advice")
		r := cnibench(t, nil, append(args, "--out", out)...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 and one line", args, r.code, r.stderr, r.stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v wrote %s", args, out)
		}
	}
	r := cnibench(t, nil, "advise", "--rule", "nope")
	if !strings.Contains(r.stderr, `unknown rule "nope"`) || !strings.Contains(r.stderr, "rfs") {
		t.Errorf("stderr %q should name the rule and the known ones", r.stderr)
	}
}
