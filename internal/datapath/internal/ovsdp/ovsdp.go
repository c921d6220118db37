// Package ovsdp drives the Open vSwitch kernel datapath (the openvswitch
// module) with Debian's ovs-dpctl, inside a node namespace: OVS datapaths
// belong to the network namespace that created them and vanish with it.
//
// No ovs-vswitchd runs: the datapath's flow table is filled with
// ovs-dpctl add-flow, so a packet without a matching flow is an upcall
// nobody answers, i.e. dropped. Flows here match on the input port and
// the EtherType (the kernel always matches EtherType exactly and wants
// the L3 key present), which is what a port-to-port switch needs.
//
// There is no well-kept Go library for the datapath's generic netlink
// families (github.com/digitalocean/go-openvswitch's ovsnl only lists
// datapaths), so argv is passed to ovs-dpctl; no shell ever sees it.
package ovsdp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/netns"
)

// Tool is the program used.
const Tool = "ovs-dpctl"

// Available reports whether ovs-dpctl is installed.
func Available() bool {
	_, err := exec.LookPath(Tool)
	return err == nil
}

// ErrNoDpctl says how to get ovs-dpctl.
var ErrNoDpctl = errors.New("ovs-dpctl is not installed (apt-get install openvswitch-switch)")

// dpctlTimeout bounds one ovs-dpctl call. Each is one netlink request to
// the kernel datapath (add-dp, add-flow, show) and returns in
// milliseconds; ten seconds is far past that even on a loaded machine, so
// a hung call (a wedged kernel module, a wrapper waiting for a daemon)
// fails the datapath's set-up or teardown instead of hanging the run. A
// variable for the test.
var dpctlTimeout = 10 * time.Second

// Dpctl runs ovs-dpctl with args inside the namespace ns and returns its
// standard output. Equivalent to: ip netns exec NS ovs-dpctl ARGS...
func Dpctl(ns string, args ...string) (string, error) {
	path, err := exec.LookPath(Tool)
	if err != nil {
		return "", ErrNoDpctl
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), dpctlTimeout,
		fmt.Errorf("ovs-dpctl %s did not finish within %v", strings.Join(args, " "), dpctlTimeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second // a killed ovs-dpctl's pipes held by nothing else
	netns.KillGroupOnCancel(cmd)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := netns.Start(ns, nil, cmd); err != nil {
		return "", fmt.Errorf("ovs-dpctl %s in %s: %w", strings.Join(args, " "), ns, err)
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return out.String(), fmt.Errorf("in %s: %w", ns, context.Cause(ctx))
		}
		return out.String(), fmt.Errorf("ovs-dpctl %s in %s: %w: %s", strings.Join(args, " "), ns, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// AddDP creates a datapath with the given ports (netdev names, each
// optionally followed by ",type=T,key=value...").
// Equivalent to: ovs-dpctl add-dp DP PORT...
func AddDP(ns, dp string, ports ...string) error {
	_, err := Dpctl(ns, append([]string{"add-dp", dp}, ports...)...)
	return err
}

// AddIf adds a port. Equivalent to: ovs-dpctl add-if DP PORT[,type=T,...]
func AddIf(ns, dp, port string) error {
	_, err := Dpctl(ns, "add-if", dp, port)
	return err
}

// DelIf removes a port from the datapath. Equivalent to: ovs-dpctl del-if DP PORT
func DelIf(ns, dp, port string) error {
	_, err := Dpctl(ns, "del-if", dp, port)
	return err
}

// DelFlow deletes a datapath flow. Equivalent to: ovs-dpctl del-flow DP KEY
func DelFlow(ns, dp, key string) error {
	_, err := Dpctl(ns, "del-flow", dp, key)
	return err
}

// AddFlow adds a datapath flow. Equivalent to: ovs-dpctl add-flow DP KEY ACTIONS
func AddFlow(ns, dp, key, actions string) error {
	_, err := Dpctl(ns, "add-flow", dp, key, actions)
	return err
}

// Ports returns the datapath's port numbers by port name, from
// `ovs-dpctl show DP` lines such as "  port 1: vethwe-datapath".
func Ports(ns, dp string) (map[string]int, error) {
	out, err := Dpctl(ns, "show", dp)
	if err != nil {
		return nil, err
	}
	return ParsePorts(out)
}

var portLine = regexp.MustCompile(`^\s*port (\d+): (\S+)`)

// ParsePorts parses the port lines of `ovs-dpctl show`. A port number
// that is not a datapath port number (the kernel's are 32-bit) is an
// error: mapping it to 0 would wire flows to port 0, the datapath's own
// internal port.
func ParsePorts(show string) (map[string]int, error) {
	ports := map[string]int{}
	for _, l := range strings.Split(show, "\n") {
		if m := portLine.FindStringSubmatch(l); m != nil {
			n, err := strconv.ParseUint(m[1], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("ovs-dpctl show: port %s of %s: %w", m[1], m[2], err)
			}
			ports[m[2]] = int(n)
		}
	}
	return ports, nil
}

// EtherTypes are the L2 payloads the port-to-port flows carry, each with
// the L3 key the kernel requires for it.
var EtherTypes = []string{"eth_type(0x0800),ipv4(frag=no)", "eth_type(0x0806),arp()"}

// Connect adds flows that send every IPv4 and ARP frame arriving on port
// in out through actions (e.g. "2" or "set(tunnel(...)),2").
func Connect(ns, dp string, in int, actions string) error {
	for _, et := range EtherTypes {
		key := fmt.Sprintf("in_port(%d),eth(),%s", in, et)
		if err := AddFlow(ns, dp, key, actions); err != nil {
			return err
		}
	}
	return nil
}
