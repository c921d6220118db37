package probe

import (
	"errors"

	"golang.org/x/sys/unix"
)

// tryIPVS looks for the generic netlink family of IPVS, the kernel's
// layer-4 load balancer that kube-proxy's and kube-router's ipvs proxy
// modes program. From Linux 5.16 asking for the family makes the kernel
// load ip_vs (its module alias names the family), a host change that
// outlives the probe, as a device's module does; before, it does not,
// and an ip_vs that is there but not loaded looks missing. modprobe is
// then asked, without loading it (modprobeDryRun), whether it can be
// loaded: a run loads it (the IPVS library cnibench programs it with,
// moby/ipvs, runs modprobe ip_vs), so the feature is there. Unlike
// tryOVS the probe itself runs no modprobe: no datapath needs IPVS, only
// the Service proxies of a datapath's netfilter state do.
// Equivalent to: genl ctrl get name IPVS || modprobe -n ip_vs
func (s *scratch) tryIPVS() (bool, string) {
	return ipvsProbe(func() error {
		_, err := s.h.GenlFamilyGet("IPVS")
		return err
	}, modprobeDryRun)
}

// ipvsProbe is tryIPVS with the family lookup and modprobe's dry run
// handed in.
func ipvsProbe(family func() error, dryRun func(module string) error) (bool, string) {
	err := family()
	switch {
	case err == nil:
		return true, ""
	case !errors.Is(err, unix.ENOENT):
		return false, failed("looking up the IPVS generic netlink family", "ip_vs", err)
	}
	if err := dryRun("ip_vs"); err != nil {
		return false, "the kernel has no IPVS generic netlink family and no ip_vs module to load (" + err.Error() + "; CONFIG_IP_VS); " +
			"needed for a datapath's netfilter: {kubeProxy: ipvs} or {kubeProxy: kube-router}"
	}
	return true, "module ip_vs is not loaded, and asking for its generic netlink family did not load it (that alias came in Linux 5.16); " +
		"it can be loaded, and a run that programs IPVS loads it (modprobe ip_vs)"
}
