// Package cniexec runs the reference CNI plugins for a pod exactly as a
// container runtime does, through the field's own library (libcni, the
// code containerd, CRI-O and Multus call).
//
// Design notes:
//   - A Node is what a runtime has on one host: the node's network
//     namespace, which the plugins run in as child processes (as a
//     runtime's plugins run in the host's namespace: cni0, eth1 and the
//     host-side veth are the node's); the node's CNI state directory, what
//     /var/lib/cni is on a real host (host-local's leases in networks/,
//     libcni's result cache in cache/); and the plugin search path
//     (CNI_PATH).
//   - ADD is containerd's (go-cni): the loopback network on "lo" and the
//     pod's network on eth0, at the same time. DEL runs the pod's network,
//     then loopback (go-cni's Remove goes the other way and stops at the
//     first error; this goes on, so that a teardown releases all it can),
//     with the configuration the ADD used; libcni hands each plugin the
//     ADD's cached result as prevResult, as CNI 1.0 requires. DEL of what
//     is already gone succeeds (the plugins' own rule).
//   - Plugins are executed from their path with the argument vector libcni
//     builds (the path alone), the CNI_* environment and the configuration
//     on stdin: nothing goes through a shell.
//   - host-local's dataDir is set here, inside the node's state directory,
//     and a configuration that names its own is refused: IPAM state belongs
//     to the node, and a run leaves nothing outside its state directory
//     (no /var/lib/cni/networks on the host).
package cniexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/netns"
)

// Subdirectories of a node's state directory.
const (
	// NetworksDir holds host-local's leases, one directory per network
	// name (a real node's /var/lib/cni/networks).
	NetworksDir = "networks"
	// CacheDir holds libcni's cached results and configurations (a real
	// node's /var/lib/cni: libcni writes them under its results/).
	CacheDir = "cache"
)

// Node is one node's CNI runtime side.
type Node struct {
	// Name is the node's name, for messages.
	Name string
	// Netns is the node's network namespace (by name); the plugins run in it.
	Netns string
	// Dir is the node's CNI state directory.
	Dir string
	// Path lists the directories the plugins are looked up in (CNI_PATH).
	Path []string
	// Timeout bounds one ADD or DEL, every plugin of it included (0:
	// DefaultTimeout).
	Timeout time.Duration
}

// DefaultTimeout bounds one ADD or DEL. The reference plugins finish in
// milliseconds on an idle machine and in a few seconds on a loaded one
// (host-local takes a file lock, bridge waits for the kernel's DAD); a
// minute is far past that, and half the two minutes kubelet gives a
// runtime for a whole sandbox (--runtime-request-timeout), so a plugin
// that hangs fails the run with a clear error instead of holding it.
const DefaultTimeout = time.Minute

// pluginStopGrace is how long a killed plugin's output pipes may stay
// open (a child it left holding them) before its wait gives up on them.
const pluginStopGrace = 2 * time.Second

func (n *Node) timeout() time.Duration {
	if n.Timeout > 0 {
		return n.Timeout
	}
	return DefaultTimeout
}

// bounded is ctx with the node's deadline for one operation; the cause
// names the operation and the deadline.
func (n *Node) bounded(ctx context.Context, op string, p Pod) (context.Context, context.CancelFunc) {
	d := n.timeout()
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("cni %s for pod %s on node %s did not finish within %v", op, p.ID, n.Name, d))
}

// Pod is the pod a call is for.
type Pod struct {
	// ID is the container ID the plugins see (CNI_CONTAINERID) and the pod
	// name in CNI_ARGS; it keys host-local's leases and libcni's cache.
	ID string
	// Netns is the pod's network namespace, by name; the plugins get its
	// path (CNI_NETNS).
	Netns string
	// IfName is the pod interface the network creates (CNI_IFNAME).
	IfName string
	// Done, when set, is told the end of each plugin call of an ADD
	// ("cni loopback", "cni bridge"), for the pod start-up breakdown.
	Done func(step string)
}

func (p Pod) done(step string) {
	if p.Done != nil {
		p.Done(step)
	}
}

// StepName names the ADD of a configuration list in the pod start-up
// breakdown: "cni " and its plugin types ("cni bridge", "cni
// macvlan+tuning"); the IPAM plugin runs inside its main plugin's call.
func StepName(l *libcni.NetworkConfigList) string {
	var types []string
	for _, p := range l.Plugins {
		types = append(types, p.Network.Type)
	}
	return "cni " + strings.Join(types, "+")
}

// Result is what ADD gave the pod.
type Result struct {
	// IP is the pod's IPv4 address.
	IP net.IP
	// HostVeth is the host-side veth in the node's namespace; "" when the
	// network has none (macvlan, ipvlan).
	HostVeth string
}

// loopbackIf is the interface the loopback network is run for.
const loopbackIf = "lo"

// Add wires pod p with the network configuration list conf on p.IfName
// and loopback, concurrently. On failure the caller should still call Del with
// the same arguments, as a runtime does, to release what was allocated.
func (n *Node) Add(ctx context.Context, p Pod, conf []byte) (Result, error) {
	ctx, cancel := n.bounded(ctx, "ADD", p)
	defer cancel()
	list, err := n.list(conf)
	if err != nil {
		return Result{}, err
	}
	lo, err := libcni.ConfListFromBytes(cniconf.Loopback())
	if err != nil {
		return Result{}, fmt.Errorf("cni loopback configuration: %w", err)
	}
	c := n.cni()
	// Both networks at once, as containerd sets a pod up by default
	// (NetworkPluginSetupSerially false: go-cni's Setup, attachNetworks,
	// one goroutine per network); the step ends when both have.
	loErr := make(chan error, 1)
	go func() {
		_, err := c.AddNetworkList(ctx, lo, n.runtime(p, loopbackIf))
		loErr <- err
	}()
	res, err := c.AddNetworkList(ctx, list, n.runtime(p, p.IfName))
	if err != nil {
		err = fmt.Errorf("cni ADD %s for pod %s on node %s: %w", list.Name, p.ID, n.Name, err)
	}
	if lerr := <-loErr; lerr != nil {
		err = errors.Join(fmt.Errorf("cni ADD %s for pod %s on node %s: %w", lo.Name, p.ID, n.Name, lerr), err)
	}
	if err != nil {
		return Result{}, err
	}
	p.done(StepName(list))
	// The list's result is its last plugin's: each passes on (or
	// rewrites) the prevResult it was given.
	out, err := n.result(res, list.Plugins[len(list.Plugins)-1].Network.Type)
	if err != nil {
		return Result{}, fmt.Errorf("cni ADD %s for pod %s on node %s: %w", list.Name, p.ID, n.Name, err)
	}
	return out, nil
}

// Del unwires pod p: conf on p.IfName, then loopback. It goes on past a
// failure and returns every error. It is bounded by the node's Timeout
// whatever ctx is: teardown passes a context that is never cancelled (it
// must finish after Ctrl-C), and a plugin that hangs must still not hold
// it forever.
func (n *Node) Del(ctx context.Context, p Pod, conf []byte) error {
	ctx, cancel := n.bounded(ctx, "DEL", p)
	defer cancel()
	list, err := n.list(conf)
	if err != nil {
		return err
	}
	lo, err := libcni.ConfListFromBytes(cniconf.Loopback())
	if err != nil {
		return fmt.Errorf("cni loopback configuration: %w", err)
	}
	c := n.cni()
	var errs []error
	if err := c.DelNetworkList(ctx, list, n.runtime(p, p.IfName)); err != nil {
		errs = append(errs, fmt.Errorf("cni DEL %s for pod %s on node %s: %w", list.Name, p.ID, n.Name, err))
	}
	if err := c.DelNetworkList(ctx, lo, n.runtime(p, loopbackIf)); err != nil {
		errs = append(errs, fmt.Errorf("cni DEL %s for pod %s on node %s: %w", lo.Name, p.ID, n.Name, err))
	}
	return errors.Join(errs...)
}

func (n *Node) cni() *libcni.CNIConfig {
	return libcni.NewCNIConfigWithCacheDir(n.Path, filepath.Join(n.Dir, CacheDir), &nsExec{netns: n.Netns})
}

// list parses conf with the node's IPAM data directory put in.
func (n *Node) list(conf []byte) (*libcni.NetworkConfigList, error) {
	b, err := WithDataDir(conf, filepath.Join(n.Dir, NetworksDir))
	if err != nil {
		return nil, err
	}
	l, err := libcni.ConfListFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("cni configuration: %w", err)
	}
	return l, nil
}

// runtime is what a runtime passes besides the configuration. The
// CNI_ARGS are those kubelet's runtimes pass; IgnoreUnknown keeps the
// reference plugins from refusing the K8S_ keys they do not know.
func (n *Node) runtime(p Pod, ifName string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{
		ContainerID: p.ID,
		NetNS:       netns.Path(p.Netns),
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", "default"},
			{"K8S_POD_NAME", p.ID},
			{"K8S_POD_INFRA_CONTAINER_ID", p.ID},
		},
	}
}

// result reads the pod's IPv4 address and host-side veth from an ADD
// result that plugin (a type) returned. The result lists host interfaces
// without a sandbox (the bridge plugin: cni0 and the veth); the veth is
// the one that is a veth.
func (n *Node) result(r types.Result, plugin string) (Result, error) {
	res, err := types100.NewResultFromResult(r)
	if err != nil {
		return Result{}, fmt.Errorf("read result: %w", err)
	}
	ip, err := podIPv4(res, plugin)
	if err != nil {
		return Result{}, err
	}
	out := Result{IP: ip}
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return Result{}, err
	}
	defer h.Close()
	for _, ifc := range res.Interfaces {
		if ifc.Sandbox != "" {
			continue
		}
		if l, err := h.LinkByName(ifc.Name); err == nil && l.Type() == "veth" {
			out.HostVeth = ifc.Name
			break
		}
	}
	return out, nil
}

// podIPv4 is the first IPv4 address of a result. A result listing an
// IPv4-mapped IPv6 address anywhere is refused: the plugin that wrote
// it is broken, whatever else it listed.
func podIPv4(res *types100.Result, plugin string) (net.IP, error) {
	var ip net.IP
	for _, ipc := range res.IPs {
		if a, ok := mappedIPv4(ipc.Address); ok {
			// Not the result's JSON: it prints the address as
			// net.IPNet does, 10.1.2.3/24.
			return nil, fmt.Errorf("plugin %s gave the pod the IPv4-mapped IPv6 address %s: no pod interface has one, and it is not the IPv4 address %s",
				plugin, a, ipc.Address.IP.To4())
		}
		if ip4 := ipc.Address.IP.To4(); ip4 != nil && ip == nil {
			ip = ip4
		}
	}
	if ip == nil {
		return nil, fmt.Errorf("the plugins gave the pod no IPv4 address (result %s)", resultString(res))
	}
	return ip, nil
}

// mappedIPv4 reports a result address written as an IPv4-mapped IPv6
// address ("::ffff:10.1.2.3/120"), as written. net.IP.To4 reads such an
// address as IPv4, yet it is a plugin's error, never a pod's address (a
// mapped address stands for an IPv4 node's inside IPv6 software, RFC
// 4291 2.5.5.2; no interface is given one), and taking it for 10.1.2.3
// would aim the workloads at an address the pod may not have. net.ParseCIDR keeps every address in 16
// bytes, so only the mask tells how it was written: 4 bytes after a
// dotted quad, 16 after IPv6 notation.
func mappedIPv4(a net.IPNet) (netip.Prefix, bool) {
	ones, bits := a.Mask.Size()
	if bits != 8*net.IPv6len || len(a.IP) != net.IPv6len || a.IP.To4() == nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(netip.AddrFrom16([16]byte(a.IP)), ones), true
}

func resultString(r *types100.Result) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// WithDataDir returns the configuration list with dir as the dataDir of
// every host-local IPAM section. A section that already names a dataDir
// is refused: the caller decides where IPAM state lives.
func WithDataDir(conf []byte, dir string) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(conf))
	d.UseNumber() // keep numbers as written (no float round trip)
	var l map[string]any
	if err := d.Decode(&l); err != nil {
		return nil, fmt.Errorf("cni configuration list: %w", err)
	}
	plugins, ok := l["plugins"].([]any)
	if !ok {
		return nil, errors.New("cni configuration list has no plugins")
	}
	for i, p := range plugins {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cni configuration list: plugin %d is not an object", i)
		}
		ipam, ok := pm["ipam"].(map[string]any)
		if !ok || ipam["type"] != cniconf.TypeHostLocal {
			continue
		}
		if v, set := ipam["dataDir"]; set {
			return nil, fmt.Errorf("cni configuration list: plugin %d's host-local IPAM names its own dataDir %v; IPAM state belongs in the node's state directory", i, v)
		}
		ipam["dataDir"] = dir
	}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("cni configuration list: %w", err)
	}
	return b, nil
}

// nsExec is libcni's invoke.Exec for a node: it runs each plugin as a
// child process inside the node's namespace (netns.Start: the process is
// forked from a thread that entered the namespace, so it never runs
// anywhere else).
type nsExec struct {
	netns string
	version.PluginDecoder
}

var _ invoke.Exec = (*nsExec)(nil)

// ExecPlugin implements invoke.Exec.
func (e *nsExec) ExecPlugin(ctx context.Context, path string, stdin []byte, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path)
	// A plugin killed at the deadline may leave a child holding its
	// output pipes: Wait gives up on them after the grace.
	cmd.WaitDelay = pluginStopGrace
	netns.KillGroupOnCancel(cmd)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := netns.Start(e.netns, nil, cmd); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", path, e.netns, err)
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s killed: %w", filepath.Base(path), context.Cause(ctx))
		}
		return nil, pluginError(path, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// FindInPath implements invoke.Exec.
func (e *nsExec) FindInPath(plugin string, paths []string) (string, error) {
	return invoke.FindInPath(plugin, paths)
}

// pluginError turns a failed plugin run into an error: the CNI error the
// plugin printed on stdout (a *types.Error, for errors.As), or the exit
// status, with whatever it wrote to stderr.
func pluginError(path string, err error, stdout, stderr []byte) error {
	name := filepath.Base(path)
	var tail string
	if s := strings.TrimSpace(string(stderr)); s != "" {
		tail = " (stderr: " + s + ")"
	}
	var e types.Error
	if json.Unmarshal(stdout, &e) == nil && (e.Code != 0 || e.Msg != "") {
		return fmt.Errorf("%s: %w%s", name, &e, tail)
	}
	if s := strings.TrimSpace(string(stdout)); s != "" {
		tail = " (stdout: " + s + ")" + tail
	}
	return fmt.Errorf("%s: %w%s", name, err, tail)
}
