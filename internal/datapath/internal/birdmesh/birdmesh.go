// Package birdmesh runs one BIRD 2 per node of a cluster (package
// daemon) and waits until the routes BIRD should program are in every
// node's kernel table. The datapaths whose routes between nodes come from
// BGP (calico-routed and kube-router with implementation: bird) write
// their own BIRD configuration and say which routes they expect; the
// running, waiting and stopping is the same and lives here.
package birdmesh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/daemon"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

const (
	// DefaultTimeout bounds the wait for the mesh to converge. BIRD
	// connects after its 1 s connect delay and programs routes as soon as
	// a session is up; 30 s leaves room for a loaded machine and a 3 s
	// retry or two.
	DefaultTimeout = 30 * time.Second
	// stopGrace is how long BIRD gets to withdraw its routes and exit
	// after SIGTERM (it needs milliseconds).
	stopGrace = 5 * time.Second
	// KeepDirEnv, set to 1, keeps the BIRD directory (configs, logs,
	// control sockets) after the run, for debugging.
	KeepDirEnv = "CNIBENCH_KEEP_BIRD_DIR"
	// maxSunPath is the room for a unix socket path (sun_path, 108 bytes
	// with the terminating NUL): BIRD cannot bind a longer one.
	maxSunPath = 107
)

// RTProtBird is RTPROT_BIRD (12), the protocol of the routes BIRD writes.
const RTProtBird = netlink.RouteProtocol(12)

// rtnBlackhole is RTN_BLACKHOLE.
const rtnBlackhole = unix.RTN_BLACKHOLE

// Mesh is the BIRDs of one cluster. The zero value is ready to use; it
// is safe for concurrent use.
type Mesh struct {
	// Label names the datapath in errors ("calico-routed (bird)").
	Label string
	// Timeout bounds Wait; 0 means DefaultTimeout.
	Timeout time.Duration

	mu      sync.Mutex
	dir     string
	daemons []*Daemon
}

// Daemon is one node's BIRD and its control socket (for birdc).
type Daemon struct {
	*daemon.Daemon
	Socket string
}

// Route is a route BIRD must have programmed on a node (proto bird).
type Route struct {
	Dst       *net.IPNet
	Gw        net.IP // nil for a blackhole
	Dev       string
	Blackhole bool
}

// String says the route as `ip route` shows it.
func (r Route) String() string {
	if r.Blackhole {
		return "blackhole " + r.Dst.String() + " proto bird"
	}
	return fmt.Sprintf("%s via %s dev %s proto bird", r.Dst, r.Gw, r.Dev)
}

// in reports whether routes hold r, programmed by BIRD.
func (r Route) in(routes []netlink.Route, dev int) bool {
	for _, k := range routes {
		if k.Protocol != RTProtBird || k.Dst == nil || k.Dst.String() != r.Dst.String() {
			continue
		}
		if r.Blackhole && k.Type == rtnBlackhole {
			return true
		}
		if !r.Blackhole && k.Gw.Equal(r.Gw) && k.LinkIndex == dev {
			return true
		}
	}
	return false
}

// Connect is a datapath's ConnectNodes with BIRD: it writes each node's
// configuration (conf), starts BIRD in every node namespace, and waits
// until every node's main table holds want(node).
// Equivalent to, per node:
//
//	ip netns exec NODE bird -f -c DIR/bird-NODE.conf -s DIR/bird-NODE.ctl -P DIR/bird-NODE.pid
func (m *Mesh) Connect(nodes []datapath.Node, conf func(datapath.Node) (string, error), want func(datapath.Node) []Route) error {
	if len(nodes) == 0 {
		return nil
	}
	if err := m.start(nodes, conf); err != nil {
		return err
	}
	return m.wait(nodes, want)
}

// start writes each node's configuration and starts its BIRD.
func (m *Mesh) start(nodes []datapath.Node, conf func(datapath.Node) (string, error)) error {
	bird, err := probe.ToolPath(probe.ToolBird)
	if err != nil {
		return err
	}
	dir, err := m.tempDir()
	if err != nil {
		return err
	}
	for _, n := range nodes {
		text, err := conf(n)
		if err != nil {
			return err
		}
		base := filepath.Join(dir, "bird-"+n.Name)
		if len(base+".ctl") > maxSunPath {
			return fmt.Errorf("BIRD control socket %s.ctl is longer than a unix socket path may be (%d bytes); set TMPDIR to a shorter directory", base, maxSunPath)
		}
		if err := os.WriteFile(base+".conf", []byte(text), 0o644); err != nil {
			return fmt.Errorf("write BIRD configuration for %s: %w", n.Name, err)
		}
		p, err := daemon.Start(n.Netns, n.Name, dir, []string{bird, "-f",
			"-c", base + ".conf", "-s", base + ".ctl", "-P", base + ".pid"})
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.daemons = append(m.daemons, &Daemon{Daemon: p, Socket: base + ".ctl"})
		m.mu.Unlock()
	}
	return nil
}

// tempDir creates the run's directory for configurations, sockets and
// logs, once.
func (m *Mesh) tempDir() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dir == "" {
		dir, err := os.MkdirTemp("", "cnibench-bird-")
		if err != nil {
			return "", fmt.Errorf("BIRD directory: %w", err)
		}
		m.dir = dir
	}
	return m.dir, nil
}

// Dir is the run's BIRD directory, "" before Connect and after Close.
func (m *Mesh) Dir() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dir
}

// wait polls every node's main table until BIRD has programmed all of
// want(node), failing early when a BIRD exits and after Timeout with the
// first missing route and the end of every BIRD's log.
func (m *Mesh) wait(nodes []datapath.Node, want func(datapath.Node) []Route) error {
	timeout := m.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, n := range nodes {
		if err := m.waitNode(ctx, n, want(n), timeout); err != nil {
			return err
		}
	}
	return nil
}

func (m *Mesh) waitNode(ctx context.Context, n datapath.Node, want []Route, timeout time.Duration) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	for {
		routes, err := netns.Dump(func() ([]netlink.Route, error) { return h.RouteList(nil, netlink.FAMILY_V4) })
		if err != nil {
			return fmt.Errorf("ip route show on %s: %w", n.Name, err)
		}
		var missing *Route
		for i := range want {
			dev := 0
			if !want[i].Blackhole {
				l, err := h.LinkByName(want[i].Dev)
				if err != nil {
					return fmt.Errorf("device %s on %s: %w", want[i].Dev, n.Name, err)
				}
				dev = l.Attrs().Index
			}
			if !want[i].in(routes, dev) {
				missing = &want[i]
				break
			}
		}
		if missing == nil {
			return nil
		}
		for _, b := range m.Running() {
			if ok, _ := b.Exited(); ok {
				return fmt.Errorf("%s: %w", m.Label, b.ErrExited())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: node %s has no route %s after %s\n%s", m.Label, n.Name, missing, timeout, m.logTails())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Running lists the BIRDs started and not yet stopped by Close.
func (m *Mesh) Running() []*Daemon {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Daemon(nil), m.daemons...)
}

// logTails quotes the end of every BIRD's log: a route missing on one
// node is as often the other node's doing (it never exported it).
func (m *Mesh) logTails() string {
	var s []string
	for _, b := range m.Running() {
		s = append(s, fmt.Sprintf("BIRD log on %s ends:\n%s", b.Node(), b.Tail(10)))
	}
	return strings.Join(s, "\n") + "\n(" + KeepDirEnv + "=1 keeps the configurations and logs)"
}

// Daemons lists one BIRD per node, for datapath.Daemons.
func (m *Mesh) Daemons() []datapath.Daemon {
	var out []datapath.Daemon
	for _, b := range m.Running() {
		out = append(out, datapath.Daemon{Name: "bird", Node: b.Node(), PID: b.PID()})
	}
	return out
}

// Close stops every BIRD (SIGTERM, SIGKILL after 5 s) and removes the
// directory unless CNIBENCH_KEEP_BIRD_DIR=1. Idempotent, and safe after
// a failed or partial setup.
func (m *Mesh) Close() error {
	m.mu.Lock()
	bs, dir := m.daemons, m.dir
	m.daemons, m.dir = nil, ""
	m.mu.Unlock()
	var errs []error
	for _, b := range bs {
		if err := b.Stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if dir != "" {
		if keep, _ := strconv.ParseBool(os.Getenv(KeepDirEnv)); keep {
			slog.Info("keeping the BIRD directory", "dir", dir, "env", KeepDirEnv)
		} else if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove BIRD directory: %w", err))
		}
	}
	return errors.Join(errs...)
}
