package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cniconf"
)

// cniPlugins are the reference plugins the wiring uses (bridge,
// macvlan, ipvlan with host-local IPAM, loopback for lo) plus ptp, the
// other plugin of the family.
var cniPlugins = []string{cniconf.TypeBridge, cniconf.TypePtp, cniconf.TypeMacvlan, cniconf.TypeIPVlan, cniconf.TypeHostLocal, cniconf.TypeLoopback}

// DefaultCNIPath is where the plugins are looked for when $CNI_PATH is
// unset: upstream's and containerd's /opt/cni/bin, then Debian's package.
var DefaultCNIPath = []string{"/opt/cni/bin", "/usr/lib/cni"}

const cniInstall = "apt-get install containernetworking-plugins (Debian/Ubuntu; installs into /usr/lib/cni), or unpack the release tarball into /opt/cni/bin"

// CNIPlugin is the probe name of a reference plugin ("cni-bridge" for
// "bridge"), for Has and Require.
func CNIPlugin(plugin string) string { return "cni-" + plugin }

// CNIPlugins lists the reference plugins the probe looks for.
func CNIPlugins() []string { return slices.Clone(cniPlugins) }

// CNIPath is the plugin search path (CNI_PATH): the directories of
// $CNI_PATH (colon-separated) when it is set, else DefaultCNIPath.
func CNIPath() []string {
	if v := os.Getenv("CNI_PATH"); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	return slices.Clone(DefaultCNIPath)
}

// cniProbes looks for every reference plugin in CNIPath and asks each
// which CNI versions it speaks (CNI_COMMAND=VERSION, as libcni's
// GetVersionInfo does): a plugin that is there but does not answer, or
// does not speak cniconf.Version, counts as missing.
func cniProbes(ctx context.Context) []Result {
	path := CNIPath()
	out := make([]Result, 0, len(cniPlugins))
	for _, p := range cniPlugins {
		out = append(out, probeCNIPlugin(ctx, p, path))
	}
	return out
}

// RequireCNIPlugins probes the plugins in path now (not cached: a caller
// may look somewhere else than CNIPath) and returns an *UnsupportedError
// naming every one that is missing (several "; "-joined, as Require),
// or nil when all answer.
func RequireCNIPlugins(ctx context.Context, path []string, plugins ...string) error {
	res := make([]Result, 0, len(plugins))
	names := make([]string, 0, len(plugins))
	for _, p := range plugins {
		res = append(res, probeCNIPlugin(ctx, p, path))
		names = append(names, CNIPlugin(p))
	}
	return require(res, names)
}

func probeCNIPlugin(ctx context.Context, plugin string, path []string) Result {
	r := Result{Name: CNIPlugin(plugin), Kind: KindCNIPlugin, Optional: true}
	bin := findExecutable(plugin, path)
	if bin == "" {
		r.Detail = fmt.Sprintf("not in %s (set CNI_PATH to look elsewhere); install it: %s; only needed for wiring: cni", strings.Join(path, ":"), cniInstall)
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	// What libcni sets for VERSION; plugins built against an old skel
	// insist on the other variables being present.
	cmd.Env = append(os.Environ(), "CNI_COMMAND=VERSION", "CNI_NETNS=dummy", "CNI_IFNAME=dummy", "CNI_PATH=dummy")
	cmd.Stdin = strings.NewReader(`{"cniVersion":"` + cniconf.Version + `"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		r.Detail = fmt.Sprintf("%s is installed but CNI_COMMAND=VERSION %s failed: %s", bin, bin, firstLine(stderr.String()+"\n"+string(stdout), err))
		return r
	}
	versions, err := parseCNIVersion(stdout)
	if err != nil {
		r.Detail = fmt.Sprintf("%s answered CNI_COMMAND=VERSION with %q: %v", bin, firstLine(string(stdout), nil), err)
		return r
	}
	if !slices.Contains(versions, cniconf.Version) {
		r.Detail = fmt.Sprintf("%s speaks CNI %s; cnibench needs %s: install a newer release (%s)", bin, strings.Join(versions, ", "), cniconf.Version, cniInstall)
		return r
	}
	r.OK = true
	r.Detail = fmt.Sprintf("at %s (CNI %s)", bin, strings.Join(versions, ", "))
	return r
}

// parseCNIVersion reads a plugin's VERSION answer:
//
//	{"cniVersion":"1.0.0","supportedVersions":["0.1.0",...,"1.0.0"]}
func parseCNIVersion(b []byte) ([]string, error) {
	var v struct {
		CNIVersion        string   `json:"cniVersion"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("not a CNI version answer: %w", err)
	}
	if len(v.SupportedVersions) == 0 {
		return nil, fmt.Errorf("no supportedVersions in the answer")
	}
	return v.SupportedVersions, nil
}

// findExecutable returns the first dir/name in path that is an
// executable regular file, as libcni's invoke.FindInPath looks.
func findExecutable(name string, path []string) string {
	for _, d := range path {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
