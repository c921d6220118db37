package probe

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

type toolSpec struct {
	name     string
	bins     []string // candidates, first found wins
	install  string
	optional bool
	// versionArgs print the version (nil: --version).
	versionArgs []string
}

// versionChecks judge the first line of `TOOL --version` for the tools
// where only some versions will do: a non-empty answer says why not.
var versionChecks = map[string]func(version string) string{
	ToolBird: birdVersion,
}

var toolSpecs = []toolSpec{
	// The workload tools' programs (iperf3, nginx, perf for cpp, ...) are
	// the drivers' to describe; doctor probes them with Programs.
	{name: ToolEthtool, bins: []string{"ethtool"}, install: "apt-get install ethtool (Debian/Ubuntu), dnf install ethtool (Fedora)"},
	{name: ToolChromium, bins: []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}, install: "apt-get install chromium; only needed for report screenshots", optional: true},
	{name: ToolFlanneld, bins: []string{"flanneld", FlanneldPath}, install: "scripts/build-flanneld.sh (builds flannel v0.28.4 into " + FlanneldPath + "); only needed for the flannel-udp datapath", optional: true},
	{name: ToolEtcd, bins: []string{"etcd"}, install: "apt-get install etcd-server (Debian/Ubuntu); only needed for the flannel-udp datapath", optional: true},
	{name: ToolIptablesRestore, bins: []string{"iptables-restore"}, install: "apt-get install iptables (Debian/Ubuntu); only needed for a datapath's network policy (policy: wp/np) or netfilter state", optional: true},
	{name: ToolIptablesSave, bins: []string{"iptables-save"}, install: "apt-get install iptables (Debian/Ubuntu); only needed for a datapath's netfilter state", optional: true},
	{name: ToolNft, bins: []string{"nft", "/usr/sbin/nft"}, install: "apt-get install nftables (Debian/Ubuntu); only needed for netfilter: {kubeProxy: nftables} and a workload's nftables counters and trace (counters: true)", optional: true},
	{name: ToolOvsDpctl, bins: []string{"ovs-dpctl"}, install: "apt-get install openvswitch-switch (Debian/Ubuntu); only needed for the ovs datapath and weave's OVS mode", optional: true},
	// /usr/sbin is not in a normal user's PATH on Debian; doctor may run
	// without sudo.
	{name: ToolBird, bins: []string{"bird", "/usr/sbin/bird"}, install: "apt-get install bird2 (Debian/Ubuntu); only needed for calico-routed and kube-router with implementation: bird", optional: true},
}

// birdVersion accepts BIRD 2 and later: cnibench writes BIRD 2
// configuration (per-channel filters), which BIRD 1.x does not parse.
func birdVersion(v string) string {
	var major, minor int
	if _, err := fmt.Sscanf(v, "BIRD version %d.%d", &major, &minor); err != nil {
		return fmt.Sprintf("unrecognised version %q (want \"BIRD version 2.x\")", v)
	}
	if major < 2 {
		return fmt.Sprintf("%s is too old: cnibench writes BIRD 2 configuration", v)
	}
	return ""
}

// ToolPath returns where the named tool is, looking in the same places
// the probe does, so a datapath runs the program doctor reported.
func ToolPath(name string) (string, error) {
	for _, t := range toolSpecs {
		if t.name != name {
			continue
		}
		for _, b := range t.bins {
			if p, err := exec.LookPath(b); err == nil {
				return p, nil
			}
		}
		return "", &UnsupportedError{Name: name, Kind: KindTool, Reason: "not found in PATH; install it: " + t.install}
	}
	return "", fmt.Errorf("probe: unknown tool %q", name)
}

// tools finds each tool in PATH and runs it with --version: a tool that is
// installed but cannot run (Ubuntu's perf wrapper without the package for
// the running kernel) counts as missing.
func tools(ctx context.Context) []Result {
	out := make([]Result, 0, len(toolSpecs))
	for _, t := range toolSpecs {
		out = append(out, probeTool(ctx, t))
	}
	return out
}

// sbinned are where a described program is looked for: PATH, then
// /usr/sbin, which a user's PATH may lack (nft, bird, iptables-save).
func sbinned(name string) []string { return []string{name, "/usr/sbin/" + name} }

// Found says whether a described program is where Programs looks for it.
func Found(name string) bool {
	for _, b := range sbinned(name) {
		if _, err := exec.LookPath(b); err == nil {
			return true
		}
	}
	return false
}

// Programs probes programs described elsewhere, each with its own version
// argv: doctor hands in the workload drivers' programs (registry), which
// this package, below the drivers, does not import. They are optional: a
// study needs them only when it runs their tool or option.
func Programs(ctx context.Context, progs []spec.Program) []Result {
	out := make([]Result, 0, len(progs))
	for _, p := range progs {
		t := toolSpec{name: p.Name, bins: sbinned(p.Name), optional: true,
			install: "apt-get install " + p.Package + " (Debian/Ubuntu)"}
		if len(p.Version) > 1 {
			t.versionArgs = p.Version[1:]
		}
		out = append(out, probeTool(ctx, t))
	}
	return out
}

func probeTool(ctx context.Context, t toolSpec) Result {
	r := Result{Name: t.name, Kind: KindTool, Optional: t.optional}
	var path string
	for _, b := range t.bins {
		if p, err := exec.LookPath(b); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		r.Detail = "not found in PATH; install it: " + t.install
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := t.versionArgs
	if args == nil {
		args = []string{"--version"}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		r.Detail = path + " is installed but `" + strings.Join(append([]string{path}, args...), " ") + "` failed: " + firstLine(stderr.String()+"\n"+string(stdout), err)
		return r
	}
	// The version is on stdout; stderr may carry launcher noise (Debian's
	// chromium wrapper prints a shell error there). BIRD prints it on
	// stderr only.
	version := firstLine(string(stdout)+"\n"+stderr.String(), nil)
	if check := versionChecks[t.name]; check != nil {
		if why := check(version); why != "" {
			r.Detail = path + ": " + why + "; install: " + t.install
			return r
		}
	}
	r.OK = true
	r.Detail = version + " at " + path
	return r
}
