package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/tune"
)

// inspectTimeout bounds one inspection (it runs ethtool, iptables-save
// and nft once per device or table).
const inspectTimeout = time.Minute

// inspect runs `cnibench advise`'s read-only inspection on this node: the
// agent has the node's network namespace (/sys/class/net, /proc/sys/net),
// its processes and interrupts, and its CNI configuration mounted at
// CNIConfDir. It reads only; the answer is the inspection as JSON.
func (s *Server) inspect() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), inspectTimeout)
	defer cancel()
	in := inspect.Inspect(ctx, s.inspectEnv())
	b, err := json.Marshal(in)
	return string(b), err
}

// inspectEnv is the inspection's Env on this node: its root, the CNI
// configuration where it is mounted, and its sysctls (inspectSysctl).
func (s *Server) inspectEnv() inspect.Env {
	env := inspect.Host()
	env.CNIConfDir = s.cfg.CNIConfDir
	env.Sysctl = s.inspectSysctl
	return env
}

// inspectSysctl reads a sysctl of the node: a host-global one
// (inspect.InInitNamespace) through the init namespace, where alone it
// exists when the node is itself a namespace (as the knobs are read and
// written), and the rest in the node's namespace, this process's. Every
// read used to go to the init namespace, so a node of a kind cluster
// reported the machine's conntrack count, not its own.
func (s *Server) inspectSysctl(p string) (string, error) {
	if inspect.InInitNamespace(p) {
		return s.fs.Read("", tune.FSProc, p)
	}
	return s.fs.base.Read("", tune.FSProc, p)
}

// Inspect asks the agent to inspect its node for `cnibench advise`.
func (c *Client) Inspect() (*inspect.Inspection, error) {
	r, err := c.Call(Request{Op: OpInspect})
	if err != nil {
		return nil, err
	}
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(r.Value), &in); err != nil {
		return nil, err
	}
	return &in, nil
}
