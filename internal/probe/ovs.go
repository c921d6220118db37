package probe

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// tryOVS looks for the generic netlink family of the Open vSwitch kernel
// datapath. Asking for it already makes the kernel try to load the module;
// if it is still missing and modprobe is installed, modprobe is run once
// and the detail says so, since that changes the host.
// Equivalent to: genl ctrl get name ovs_datapath
func (s *scratch) tryOVS() (bool, string) {
	const family = "ovs_datapath"
	_, err := s.h.GenlFamilyGet(family)
	if err == nil {
		return true, ""
	}
	why := ovsMissing(err)
	path, lerr := exec.LookPath("modprobe")
	if lerr != nil {
		return false, why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, merr := exec.CommandContext(ctx, path, "openvswitch").CombinedOutput()
	if merr != nil {
		return false, why + "; ran modprobe openvswitch, which failed: " + firstLine(string(out), merr)
	}
	if _, err := s.h.GenlFamilyGet(family); err != nil {
		return false, why + "; ran modprobe openvswitch, still " + ovsMissing(err)
	}
	return true, "loaded the openvswitch module by running modprobe openvswitch"
}

func ovsMissing(err error) string {
	if errors.Is(err, unix.ENOENT) {
		return "the kernel has no ovs_datapath generic netlink family (kernel lacks the openvswitch module)"
	}
	return failed("looking up the ovs_datapath generic netlink family", "openvswitch", err)
}

// firstLine is the first non-empty line of out, or err's text.
func firstLine(out string, err error) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
