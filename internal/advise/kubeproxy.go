package advise

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// What netfilter-rules may propose instead of kube-proxy's iptables
// chains, by what the node has. kube-proxy refuses nftables mode on a
// kernel before 5.13 (kubernetes pkg/proxy/nftables: "kube-proxy in
// nftables mode requires kernel %s or later", with
// utilkernel.NFTablesKubeProxyKernelVersion = "5.13"); its ipvs mode is
// deprecated since Kubernetes 1.35 (KEP-5495, "Deprecate ipvs mode in
// kube-proxy": sig-network steers ipvs users to nftables); and a mode the
// node already runs in is no proposal.

// nftablesKernel is the kernel kube-proxy's nftables mode needs, as
// kernelVersion numbers it (5.13).
const nftablesKernel = 513

// kernelVersion is the kernel's major and minor version as one number,
// major*100 + minor ("6.8.0-45-generic" is 608, 5.13 is 513), so that a
// predicate can compare it ("kernel_version >= 513").
func kernelVersion(in *inspect.Inspection) (value, error) {
	if err := known(in, "kernel"); err != nil {
		return value{}, err
	}
	v, err := parseKernel(in.Kernel)
	return num(float64(v)), err
}

// parseKernel reads major.minor from the front of a release as the
// kernel's Makefile builds it: VERSION.PATCHLEVEL, then .SUBLEVEL and an
// EXTRAVERSION or local version ("-45-generic", "+bpo-amd64"). Both are
// plain decimals: a release that does not begin so ("6-8", ".6.8", a
// major too long to be one) is no version, not a wrong one.
func parseKernel(release string) (int, error) {
	majorText, rest, dot := strings.Cut(release, ".")
	minorText := rest
	if i := strings.IndexAny(rest, ".-+"); i >= 0 {
		minorText = rest[:i]
	}
	major, ok1 := decimal(majorText, 4)
	minor, ok2 := decimal(minorText, 2)
	if !dot || !ok1 || !ok2 {
		return 0, fmt.Errorf("kernel release %q: no major.minor", release)
	}
	return major*100 + minor, nil
}

// decimal reads s as a number of 1 to most decimal digits, no sign.
func decimal(s string, most int) (int, bool) {
	if len(s) == 0 || len(s) > most || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// kubeProxyNftables: kube-proxy already runs in nftables mode, whose
// Service lookup is a verdict map, not a chain walked rule by rule.
func kubeProxyNftables(in *inspect.Inspection) (value, error) {
	if in.Netfilter.KubeProxy == "" {
		if err := known(in, "nftables"); err != nil {
			return value{}, err
		}
	}
	return yes(in.Netfilter.KubeProxy == inspect.KubeProxyNftables), nil
}

// kubeProxyModeText is {kube_proxy_mode}: the mode kube-proxy's tables
// say, or that none of them was seen.
func kubeProxyModeText(in *inspect.Inspection) (string, error) {
	if m := in.Netfilter.KubeProxy; m != "" {
		return m + " mode", nil
	}
	return "not seen (none of its tables: an eBPF service datapath may replace it, or the rules are the CNI's policy)", nil
}

// netfilterAlternatives is {netfilter_alternatives}: what may take the
// node's Service lookup out of iptables' chains, leaving out the mode it
// has and saying what each needs.
func netfilterAlternatives(in *inspect.Inspection) (string, error) {
	var out []string
	if in.Netfilter.KubeProxy != inspect.KubeProxyNftables {
		switch k, err := parseKernel(in.Kernel); {
		case err != nil:
			out = append(out, "kube-proxy in nftables mode (Kubernetes >= 1.31; needs kernel 5.13 or later, this node's unknown)")
		case k >= nftablesKernel:
			out = append(out, "kube-proxy in nftables mode (Kubernetes >= 1.31)")
		default:
			out = append(out, fmt.Sprintf("kube-proxy in nftables mode once the kernel is 5.13 or later (this node: %s; kube-proxy refuses it before)", in.Kernel))
		}
	}
	if in.Netfilter.KubeProxy != inspect.KubeProxyIPVS && in.Netfilter.KubeProxy != inspect.KubeProxyNftables {
		out = append(out, "IPVS mode (deprecated since Kubernetes 1.35, KEP-5495)")
	}
	out = append(out, "an eBPF service datapath (Cilium's kube-proxy replacement, Calico's eBPF dataplane)")
	return strings.Join(out, "; or "), nil
}

// kubeProxyConfig is {kube_proxy_config}: the kube-proxy configuration
// change to review, the mode this node can take.
func kubeProxyConfig(in *inspect.Inspection) (string, error) {
	switch k, err := parseKernel(in.Kernel); {
	case in.Netfilter.KubeProxy == inspect.KubeProxyNftables:
		return "", errors.New("kube-proxy already runs in nftables mode")
	case err == nil && k < nftablesKernel:
		return fmt.Sprintf("# this node's kernel %s is older than 5.13, which kube-proxy's nftables mode needs:\n"+
			"# upgrade the kernel first, or move Services to an eBPF datapath.\n"+
			"# (mode: \"ipvs\" would run, but is deprecated since Kubernetes 1.35, KEP-5495)", in.Kernel), nil
	}
	return "mode: \"nftables\"   # Kubernetes >= 1.31, kernel >= 5.13 (ipvs is deprecated since 1.35, KEP-5495)", nil
}
