package probe

import (
	"errors"

	"golang.org/x/sys/unix"
)

// tryIPVS looks for the generic netlink family of IPVS, the kernel's
// layer-4 load balancer that kube-proxy's and kube-router's ipvs proxy
// modes program. Asking for the family makes the kernel try to load
// ip_vs (its module alias names the family); unlike tryOVS, modprobe is
// not run: no datapath needs IPVS, only the Service proxies of a
// datapath's netfilter state do, so the probe reports (naming them) and
// never changes the host.
// Equivalent to: genl ctrl get name IPVS (ipvsadm -ln succeeds)
func (s *scratch) tryIPVS() (bool, string) {
	if _, err := s.h.GenlFamilyGet("IPVS"); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, "the kernel has no IPVS generic netlink family (kernel lacks the ip_vs module, CONFIG_IP_VS); " +
				"needed for a datapath's netfilter: {kubeProxy: ipvs} or {kubeProxy: kube-router}"
		}
		return false, failed("looking up the IPVS generic netlink family", "ip_vs", err)
	}
	return true, ""
}
