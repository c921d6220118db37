package agent

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"

	"github.com/cnibench/cnibench/internal/metrics/nftrace"
)

// The netfilter path of the measured packets (package nftrace) on the
// node: OpTraceStart marks the packets between Args (addresses) in a
// trace table named for this session's process and reads the trace
// events; OpTraceStop deletes the table and returns the counts. A
// session that ends with a trace running stops it; a session killed
// outright leaves a table whose owner is dead, which the daemon's replay
// (and `cnibench cleanup --kube`) sweeps.

// handleTrace answers OpTraceStart and OpTraceStop.
func (s *Server) handleTrace(req Request, resp *Response) error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if req.Op == OpTraceStop {
		if s.trace == nil {
			return errors.New("trace: not started")
		}
		p, err := s.trace.Stop()
		s.trace = nil
		resp.Counts = pathCounts(p)
		return err
	}
	if s.trace != nil {
		return errors.New("trace: already running in this session")
	}
	addrs := make([]netip.Addr, 0, len(req.Args))
	for _, a := range req.Args {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		addrs = append(addrs, ip)
	}
	if len(addrs) == 0 {
		return errors.New("trace: no addresses")
	}
	tr, err := nftrace.Start(addrs, (*exec.Cmd).Start)
	if err != nil {
		return err
	}
	s.trace = tr
	return nil
}

// stopTraceLocked ends the session's trace, if one runs (s.jmu held).
func (s *Server) stopTraceLocked() error {
	if s.trace == nil {
		return nil
	}
	_, err := s.trace.Stop()
	s.trace = nil
	return err
}

// sweepTraces deletes the trace tables of dead sessions, where a trace
// could have been made: nft on the node and the privilege to use it.
func sweepTraces() (int, error) {
	if _, err := exec.LookPath("nft"); err != nil || os.Geteuid() != 0 {
		return 0, nil
	}
	gone, err := nftrace.Sweep((*exec.Cmd).Start)
	return len(gone), err
}

// TraceStart marks the packets between addrs for tracing on the node.
func (c *Client) TraceStart(addrs []netip.Addr) error {
	args := make([]string, len(addrs))
	for i, a := range addrs {
		args[i] = a.String()
	}
	_, err := c.Call(Request{Op: OpTraceStart, Args: args})
	return err
}

// TraceStop ends the trace and returns what the marked packets traversed.
func (c *Client) TraceStop() (nftrace.Path, error) {
	r, err := c.Call(Request{Op: OpTraceStop})
	return countsPath(r.Counts), err
}

// pathCounts and countsPath carry a trace's path in a response's counts.
func pathCounts(p nftrace.Path) map[string]int {
	return map[string]int{"chains": p.Chains, "rules": p.Rules, "packets": p.Packets, "lost": p.Lost}
}

func countsPath(c map[string]int) nftrace.Path {
	return nftrace.Path{Chains: c["chains"], Rules: c["rules"], Packets: c["packets"], Lost: c["lost"]}
}
