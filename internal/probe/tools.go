package probe

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

type toolSpec struct {
	name     string
	bins     []string // candidates, first found wins
	install  string
	optional bool
}

// versionChecks judge the first line of `TOOL --version` for the tools
// where only some versions will do: a non-empty answer says why not.
var versionChecks = map[string]func(version string) string{
	ToolBird: birdVersion,
}

var toolSpecs = []toolSpec{
	{ToolIperf3, []string{"iperf3"}, "apt-get install iperf3 (Debian/Ubuntu), dnf install iperf3 (Fedora)", false},
	{ToolEthtool, []string{"ethtool"}, "apt-get install ethtool (Debian/Ubuntu), dnf install ethtool (Fedora)", false},
	{ToolPerf, []string{"perf"}, "apt-get install linux-perf (Debian), linux-tools-$(uname -r) (Ubuntu), dnf install perf (Fedora)", false},
	{ToolChromium, []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}, "apt-get install chromium; only needed for report screenshots", true},
	{ToolFlanneld, []string{"flanneld", FlanneldPath}, "scripts/build-flanneld.sh (builds flannel v0.28.4 into " + FlanneldPath + "); only needed for the flannel-udp datapath", true},
	{ToolEtcd, []string{"etcd"}, "apt-get install etcd-server (Debian/Ubuntu); only needed for the flannel-udp datapath", true},
	{ToolIptablesRestore, []string{"iptables-restore"}, "apt-get install iptables (Debian/Ubuntu); only needed for a datapath's network policy (policy: wp/np)", true},
	{ToolOvsDpctl, []string{"ovs-dpctl"}, "apt-get install openvswitch-switch (Debian/Ubuntu); only needed for the ovs datapath and weave's OVS mode", true},
	// /usr/sbin is not in a normal user's PATH on Debian; doctor may run
	// without sudo.
	{ToolBird, []string{"bird", "/usr/sbin/bird"}, "apt-get install bird2 (Debian/Ubuntu); only needed for calico-routed with implementation: bird", true},
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
	cmd := exec.CommandContext(ctx, path, "--version")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		r.Detail = path + " is installed but `" + path + " --version` failed: " + firstLine(stderr.String()+"\n"+string(stdout), err)
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
