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
	env := inspect.Host()
	env.CNIConfDir = s.cfg.CNIConfDir
	// The node's /proc/sys through the init namespace where the
	// host-global sysctls are (as the knobs are read and written).
	env.Sysctl = func(p string) (string, error) { return s.fs.Read("", tune.FSProc, p) }
	in := inspect.Inspect(ctx, env)
	b, err := json.Marshal(in)
	return string(b), err
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
