package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// Client speaks to one agent session over a pair of streams (the exec's
// stdin and stdout). It is safe for concurrent use: calls are serialized.
type Client struct {
	mu   sync.Mutex
	w    io.WriteCloser
	r    *bufio.Reader
	next int
	err  error // sticky: a broken stream stays broken
	run  string
	// timeout bounds each call; slow ops (perf's report, replaying
	// journals) get slowTimeout.
	timeout, slowTimeout time.Duration
}

// Default deadlines of a call: an agent that does not answer in time
// (a hung node, an exec stream stuck in the API server) fails the call
// instead of hanging the run.
const (
	DefaultCallTimeout = 30 * time.Second
	SlowCallTimeout    = 3 * time.Minute
)

// ErrTimeout is a call the agent did not answer within its deadline; the
// session is broken afterwards (a late answer would pair with the next
// request).
var ErrTimeout = errors.New("agent did not answer in time")

// slowOps take longer than a knob write: perf's report, replaying
// journals (a claim replays dead sessions' first), reverting a session,
// sampling windows, a trace's start (nft reads the whole ruleset before
// it listens: seconds on a big node).
var slowOps = map[string]bool{OpClaim: true, OpCPPStop: true, OpCPPReport: true, OpCPPStart: true, OpReplay: true, OpRevert: true, OpIptables: true, OpInspect: true, OpImpair: true, OpFeatures: true,
	OpTraceStart: true, OpTraceStop: true}

var _ tune.FS = (*Client)(nil)

// NewClient returns a client that writes requests to w and reads
// responses from r. Close closes w, which ends the session.
func NewClient(w io.WriteCloser, r io.Reader) *Client {
	return &Client{w: w, r: bufio.NewReaderSize(r, 64<<10), timeout: DefaultCallTimeout, slowTimeout: SlowCallTimeout}
}

// SetRun names the run every request carries; the agent session answers
// only its own run's requests.
func (c *Client) SetRun(run string) { c.run = run }

// SetTimeouts sets the deadline of ordinary and of slow calls.
func (c *Client) SetTimeouts(normal, slow time.Duration) { c.timeout, c.slowTimeout = normal, slow }

// Hello is the version handshake: it returns the agent's version.
func (c *Client) Hello(controllerVersion string) (string, error) {
	r, err := c.Call(Request{Op: OpHello, Value: controllerVersion})
	return r.Value, err
}

// Claim holds the node for this session's run until the session ends,
// whether the run measures or changes it; a session of another run
// holding it refuses the claim (ErrNodeBusy). Only a run's session
// claims: a read-only one (preflight, advise) never needs to.
func (c *Client) Claim() error {
	_, err := c.Call(Request{Op: OpClaim})
	return err
}

// Close ends the session: the agent reverts what is still changed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = errors.New("agent session closed")
	}
	return c.w.Close()
}

// Abort ends the session as Close does (the agent reverts what is still
// changed), after the call under way if any; every call from then on
// returns err, why the session was ended.
func (c *Client) Abort(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	return c.w.Close()
}

// Call sends one request and waits for its response. An error the agent
// reported is a *RemoteError; the Response is returned as well.
func (c *Client) Call(req Request) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return Response{}, c.err
	}
	c.next++
	req.ID = c.next
	req.Run = c.run
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	timeout := c.timeout
	if slowOps[req.Op] {
		timeout = c.slowTimeout
	}
	type result struct {
		line []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if _, err := c.w.Write(append(b, '\n')); err != nil {
			done <- result{err: fmt.Errorf("agent session: send: %w", err)}
			return
		}
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			err = fmt.Errorf("agent session: receive: %w", err)
		}
		done <- result{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var res result
	select {
	case res = <-done:
	case <-t.C:
		// Closing stdin ends the session on the agent's side (it reverts
		// what it changed); the goroutine ends when the stream does.
		c.err = fmt.Errorf("%w: %s (request %d) got no answer within %v; session closed", ErrTimeout, req.Op, req.ID, timeout)
		c.w.Close()
		return Response{}, c.err
	}
	if res.err != nil {
		c.err = res.err
		return Response{}, c.err
	}
	line := res.line
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		c.err = fmt.Errorf("agent session: bad response %q: %w", truncate(line), err)
		return Response{}, c.err
	}
	if resp.ID != req.ID {
		c.err = fmt.Errorf("agent session: response %d to request %d", resp.ID, req.ID)
		return Response{}, c.err
	}
	if resp.Error != "" {
		return resp, &RemoteError{Op: req.Op, Msg: resp.Error, Kind: resp.Kind, Node: resp.Node}
	}
	return resp, nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// Read implements tune.FS.
func (c *Client) Read(netns, fsKind, path string) (string, error) {
	r, err := c.Call(Request{Op: OpRead, Netns: netns, FS: fsKind, Path: path})
	return r.Value, err
}

// Write implements tune.FS; the agent journals the old value first.
func (c *Client) Write(netns, fsKind, path, value string) error {
	_, err := c.Call(Request{Op: OpWrite, Netns: netns, FS: fsKind, Path: path, Value: value})
	return err
}

// List implements tune.FS.
func (c *Client) List(netns, fsKind, dir string) ([]string, error) {
	r, err := c.Call(Request{Op: OpList, Netns: netns, FS: fsKind, Path: dir})
	return r.List, err
}

// HostVeth returns the name of the host-side peer of iface in netns.
func (c *Client) HostVeth(netns, iface string) (string, error) {
	r, err := c.Call(Request{Op: OpHostVeth, Netns: netns, Iface: iface})
	return r.Value, err
}

// AddrDev returns the node's device that holds ip, and the devices at
// the bottom of its stack (a bond's ports, a VLAN's parent, an Open
// vSwitch bridge's NICs; none for a plain device), where RPS is decided
// for what it receives.
func (c *Client) AddrDev(ip string) (dev string, stackedOn []string, err error) {
	r, err := c.Call(Request{Op: OpAddrDev, Value: ip})
	return r.Value, r.List, err
}

// LowerDev returns the device the tunnel sends its packets through (a
// VXLAN device's VTEP device, an IP tunnel's link), "" for a tunnel bound
// to none, and the devices at the bottom of its stack, as AddrDev. An
// agent older than the op answers "unknown op".
func (c *Client) LowerDev(tunnel string) (dev string, stackedOn []string, err error) {
	r, err := c.Call(Request{Op: OpLowerDev, Value: tunnel})
	return r.Value, r.List, err
}

// Links returns the network device names of netns ("" = the node).
func (c *Client) Links(netns string) ([]string, error) {
	r, err := c.Call(Request{Op: OpLinks, Netns: netns})
	return r.List, err
}

// SampleStart starts the session's CPU sampler on the node.
func (c *Client) SampleStart() error {
	_, err := c.Call(Request{Op: OpSampleStart})
	return err
}

// SampleStop stops the session's sampler and returns its window.
func (c *Client) SampleStop() (metrics.Window, error) {
	r, err := c.Call(Request{Op: OpSampleStop})
	if r.Window == nil {
		if err == nil {
			err = errors.New("agent returned no window")
		}
		return metrics.Window{}, err
	}
	return *r.Window, err
}

// CNIConf returns the files of the node's CNI config directory.
func (c *Client) CNIConf() (map[string]string, error) {
	r, err := c.Call(Request{Op: OpCNIConf})
	return r.Files, err
}

// Iptables returns chain and rule counts of the node's rule sets, and
// from, which iptables-save read them and whether the other backend
// holds rules too ("" from an agent that does not say).
func (c *Client) Iptables() (counts map[string]int, from string, err error) {
	r, err := c.Call(Request{Op: OpIptables})
	return r.Counts, r.Value, err
}

// Info describes the node.
func (c *Client) Info() (NodeInfo, error) {
	r, err := c.Call(Request{Op: OpInfo})
	if r.Info == nil {
		if err == nil {
			err = errors.New("agent returned no info")
		}
		return NodeInfo{}, err
	}
	return *r.Info, err
}

// Revert asks the agent to put back everything this session changed.
func (c *Client) Revert() (int, error) {
	r, err := c.Call(Request{Op: OpRevert})
	return r.Reverted, err
}

// Replay asks the agent to revert the journals of dead sessions.
func (c *Client) Replay() (int, error) {
	r, err := c.Call(Request{Op: OpReplay})
	return r.Reverted, err
}

// Missing returns which of progs the agent's image does not have on its
// PATH (the workload pods run the same image).
func (c *Client) Missing(progs ...string) ([]string, error) {
	r, err := c.Call(Request{Op: OpMissing, Args: progs})
	return r.List, err
}

// IfStats returns the counters of devices of the node or its pods.
func (c *Client) IfStats(ifs []netns.Iface) ([]ifstats.Counters, error) {
	r, err := c.Call(Request{Op: OpIfStats, Ifaces: ifs})
	if err == nil && len(r.IfStats) != len(ifs) {
		err = fmt.Errorf("agent returned %d counters for %d devices", len(r.IfStats), len(ifs))
	}
	return r.IfStats, err
}

// MemoryPercent is the node's memory in use, in percent.
func (c *Client) MemoryPercent() (float64, error) {
	r, err := c.Call(Request{Op: OpMemory})
	return r.Number, err
}

// CPPStart starts perf on the node for one window; packets are counted
// on ifs, and the samples of procs (the datapath's per-packet processes,
// flannel-udp's flanneld) beside the workload's.
func (c *Client) CPPStart(ifs []netns.Iface, procs ...string) error {
	_, err := c.Call(Request{Op: OpCPPStart, Ifaces: ifs, Args: procs})
	return err
}

// CPPStop ends the window: perf stops recording on the node.
func (c *Client) CPPStop() error {
	_, err := c.Call(Request{Op: OpCPPStop})
	return err
}

// CPPReport returns the CPU cost per packet of the window CPPStop ended,
// computed on the node (cpp.Recorder's result): perf report runs there
// now, after the other collectors' windows have closed.
func (c *Client) CPPReport() (cpp.Result, error) {
	r, err := c.Call(Request{Op: OpCPPReport})
	if r.CPP == nil {
		if err == nil {
			err = errors.New("agent returned no cpu cost per packet")
		}
		return cpp.Result{}, err
	}
	return *r.CPP, err
}

// Impair installs netem on the node's device ifc (journaled on the node)
// and returns the device it sits on (ifc, or an ifb for ingress) and the
// netem as installed, with the queue limit the agent set under a shaper;
// an agent that does not say is taken to have installed a.Spec as given.
func (c *Client) Impair(ifc netns.Iface, a ImpairArgs) (string, impair.Spec, error) {
	r, err := c.Call(Request{Op: OpImpair, Ifaces: []netns.Iface{ifc}, Impair: &a})
	if r.Netem == nil {
		return r.Value, a.Spec, err
	}
	return r.Value, *r.Netem, err
}

// Unimpair puts back the qdisc Impair replaced on ifc.
func (c *Client) Unimpair(ifc netns.Iface) error {
	_, err := c.Call(Request{Op: OpUnimpair, Ifaces: []netns.Iface{ifc}})
	return err
}

// QdiscStats reads the counters of the netem on each device.
func (c *Client) QdiscStats(ifs []netns.Iface) ([]impair.Stats, error) {
	r, err := c.Call(Request{Op: OpQdiscStats, Ifaces: ifs})
	if err == nil && len(r.Qdiscs) != len(ifs) {
		err = fmt.Errorf("agent returned %d qdisc counters for %d devices", len(r.Qdiscs), len(ifs))
	}
	return r.Qdiscs, err
}

// Features returns which of the kernel features the node lacks, each
// with the reason its probe gave.
func (c *Client) Features(names ...string) (map[string]string, error) {
	r, err := c.Call(Request{Op: OpFeatures, Args: names})
	return r.Files, err
}

// Daemons lists the node's processes named names, with CPU time and
// memory.
func (c *Client) Daemons(names ...string) ([]procs.Proc, error) {
	r, err := c.Call(Request{Op: OpDaemons, Args: names})
	return r.Procs, err
}
