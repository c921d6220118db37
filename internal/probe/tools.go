package probe

import (
	"bytes"
	"context"
	"os/exec"
	"time"
)

type toolSpec struct {
	name     string
	bins     []string // candidates, first found wins
	install  string
	optional bool
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
	// chromium wrapper prints a shell error there).
	r.OK = true
	r.Detail = firstLine(string(stdout)+"\n"+stderr.String(), nil) + " at " + path
	return r
}
