package calicorouted

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

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/datapath/internal/daemon"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

const (
	// birdTimeout bounds the wait for the mesh to converge. BIRD connects
	// after its 1 s connect delay and programs routes as soon as a session
	// is up; 30 s leaves room for a loaded machine and a 3 s retry or two.
	birdTimeout = 30 * time.Second
	// birdStopGrace is how long BIRD gets to withdraw its routes and exit
	// after SIGTERM (it needs milliseconds).
	birdStopGrace = 5 * time.Second
	// KeepDirEnv, set to 1, keeps the BIRD directory (configs, logs,
	// control sockets) after the run, for debugging.
	KeepDirEnv = "CNIBENCH_KEEP_BIRD_DIR"
	// maxSunPath is the room for a unix socket path (sun_path, 108 bytes
	// with the terminating NUL): BIRD cannot bind a longer one.
	maxSunPath = 107
)

// BIRD is calico-routed with its routes between nodes distributed by a
// real BGP daemon, one BIRD 2 per node in an iBGP full mesh, as
// calico/node does. Pods are wired as by the static datapath.
type BIRD struct {
	Datapath
	// Timeout bounds ConnectNodes' wait for the routes; 0 means 30 s.
	Timeout time.Duration

	mu      sync.Mutex
	dir     string
	daemons []*birdDaemon
}

// birdDaemon is one node's BIRD and its control socket (for birdc).
type birdDaemon struct {
	*daemon.Daemon
	socket string
}

// NewBIRD returns calico-routed run by BIRD.
func NewBIRD() *BIRD { return &BIRD{} }

// Features implements datapath.Datapath: the static datapath's, and BIRD.
func (d *BIRD) Features() []string {
	return append(d.Datapath.Features(), probe.ToolBird)
}

// SetupNode turns on forwarding. The block's blackhole route is left to
// BIRD, as in Calico (its static protocol holds the block; the kernel
// protocol installs it): were it added here too, BIRD would silently
// take over the same route and ConnectNodes could not tell whether BIRD
// had installed it.
// Equivalent to: sysctl net.ipv4.ip_forward=1
func (d *BIRD) SetupNode(n datapath.Node) error {
	if n.Index == 0 {
		// A new cluster: if the engine reuses this value without closing
		// it, stop the previous cluster's daemons first.
		if err := d.Close(); err != nil {
			return err
		}
	}
	return d.Datapath.forwarding(n)
}

// ConnectNodes writes each node's BIRD configuration, starts BIRD in
// every node namespace, and waits until every node's kernel table holds
// what BIRD programs: the blackhole route of its own block and a route
// to each other node's block via that node's underlay address, all
// "proto bird".
// Equivalent to, per node:
//
//	ip netns exec NODE bird -f -c DIR/bird-NODE.conf -s DIR/bird-NODE.ctl -P DIR/bird-NODE.pid
func (d *BIRD) ConnectNodes(nodes []datapath.Node) error {
	if len(nodes) == 0 {
		return nil
	}
	bird, err := probe.ToolPath(probe.ToolBird)
	if err != nil {
		return err
	}
	dir, err := d.tempDir()
	if err != nil {
		return err
	}
	for _, n := range nodes {
		conf, err := newBirdConf(n, nodes)
		if err != nil {
			return err
		}
		text, err := conf.Render()
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
		d.mu.Lock()
		d.daemons = append(d.daemons, &birdDaemon{Daemon: p, socket: base + ".ctl"})
		d.mu.Unlock()
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = birdTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.waitRoutes(ctx, nodes, timeout)
}

// tempDir creates the run's directory for configurations, sockets and
// logs, once.
func (d *BIRD) tempDir() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "cnibench-bird-")
		if err != nil {
			return "", fmt.Errorf("BIRD directory: %w", err)
		}
		d.dir = dir
	}
	return d.dir, nil
}

// birdRoute is a route BIRD must have programmed on a node.
type birdRoute struct {
	dst       *net.IPNet
	gw        net.IP // nil for the blackhole
	dev       string
	blackhole bool
}

// String says the route as `ip route` shows it.
func (r birdRoute) String() string {
	if r.blackhole {
		return "blackhole " + r.dst.String() + " proto bird"
	}
	return fmt.Sprintf("%s via %s dev %s proto bird", r.dst, r.gw, r.dev)
}

// wantRoutes lists what BIRD programs on node n of nodes: the blackhole
// of its block, then each other node's block via that node.
func wantRoutes(n datapath.Node, nodes []datapath.Node) []birdRoute {
	want := []birdRoute{{dst: calicopod.Block(n), blackhole: true}}
	for _, r := range nodes {
		if r.Name != n.Name {
			want = append(want, birdRoute{dst: calicopod.Block(r), gw: r.UnderlayIP, dev: n.Underlay})
		}
	}
	return want
}

// in reports whether routes hold r, programmed by BIRD.
func (r birdRoute) in(routes []netlink.Route, underlay int) bool {
	for _, k := range routes {
		if k.Protocol != rtprotBird || k.Dst == nil || k.Dst.String() != r.dst.String() {
			continue
		}
		if r.blackhole && k.Type == unixRTNBlackhole {
			return true
		}
		if !r.blackhole && k.Gw.Equal(r.gw) && k.LinkIndex == underlay {
			return true
		}
	}
	return false
}

// waitRoutes polls every node's main table until BIRD has programmed
// all of wantRoutes, failing early when a BIRD exits.
func (d *BIRD) waitRoutes(ctx context.Context, nodes []datapath.Node, timeout time.Duration) error {
	for _, n := range nodes {
		if err := d.waitNode(ctx, n, wantRoutes(n, nodes), timeout); err != nil {
			return err
		}
	}
	return nil
}

func (d *BIRD) waitNode(ctx context.Context, n datapath.Node, want []birdRoute, timeout time.Duration) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(n.Underlay)
	if err != nil {
		return fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
	}
	for {
		routes, err := netns.Dump(func() ([]netlink.Route, error) { return h.RouteList(nil, netlink.FAMILY_V4) })
		if err != nil {
			return fmt.Errorf("ip route show on %s: %w", n.Name, err)
		}
		var missing *birdRoute
		for i := range want {
			if !want[i].in(routes, l.Attrs().Index) {
				missing = &want[i]
				break
			}
		}
		if missing == nil {
			return nil
		}
		for _, b := range d.running() {
			if ok, _ := b.Exited(); ok {
				return fmt.Errorf("calico-routed (bird): %w", b.ErrExited())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("calico-routed (bird): node %s has no route %s after %s\n%s", n.Name, missing, timeout, d.logTails())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *BIRD) running() []*birdDaemon {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*birdDaemon(nil), d.daemons...)
}

// logTails quotes the end of every BIRD's log: a route missing on one
// node is as often the other node's doing (it never exported it).
func (d *BIRD) logTails() string {
	var s []string
	for _, b := range d.running() {
		s = append(s, fmt.Sprintf("BIRD log on %s ends:\n%s", b.Node(), b.Tail(10)))
	}
	return strings.Join(s, "\n") + "\n(" + KeepDirEnv + "=1 keeps the configurations and logs)"
}

// Daemons implements datapath.Daemons: one BIRD per node.
func (d *BIRD) Daemons() []datapath.Daemon {
	var out []datapath.Daemon
	for _, b := range d.running() {
		out = append(out, datapath.Daemon{Name: "bird", Node: b.Node(), PID: b.PID()})
	}
	return out
}

// Close stops every BIRD (SIGTERM, SIGKILL after 5 s) and removes the
// directory unless CNIBENCH_KEEP_BIRD_DIR=1. Idempotent, and safe after
// a failed or partial setup.
func (d *BIRD) Close() error {
	d.mu.Lock()
	bs, dir := d.daemons, d.dir
	d.daemons, d.dir = nil, ""
	d.mu.Unlock()
	var errs []error
	for _, b := range bs {
		if err := b.Stop(birdStopGrace); err != nil {
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

var (
	_ datapath.Closer    = (*BIRD)(nil)
	_ datapath.Daemons   = (*BIRD)(nil)
	_ datapath.MTUSetter = (*BIRD)(nil)
	_ datapath.MTUSetter = (*Datapath)(nil)
	_ datapath.Datapath  = (*BIRD)(nil)
)
