package wire

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Without br_netfilter (no sysctl file) BridgeNetfilterOn is no error,
// so Flannel and Weave run without the module; any other failure to
// write the sysctl is one.
func TestBridgeNetfilterOnWithoutTheModule(t *testing.T) {
	defer func(f func(ns, key, value string) error) { sysctl = f }(sysctl)
	var wrote string
	sysctl = func(ns, key, value string) error {
		wrote = ns + " " + key + "=" + value
		return fmt.Errorf("sysctl %s=%s in %s: %w", key, value, ns, os.ErrNotExist)
	}
	if err := BridgeNetfilterOn("node-ns"); err != nil || wrote != "node-ns net/bridge/bridge-nf-call-iptables=1" {
		t.Errorf("no br_netfilter: %v (wrote %q)", err, wrote)
	}
	sysctl = func(ns, key, value string) error { return fmt.Errorf("sysctl %s: %w", key, os.ErrPermission) }
	if err := BridgeNetfilterOn("node-ns"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("a sysctl that cannot be written: %v", err)
	}
}
