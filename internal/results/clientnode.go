package results

// ClientNodeEnv is env.json's client_node: a cluster's client node, the
// other end of every inter-node trial, as the kube engine describes it.
// The machine facts of Env are the server node's; a --resume holds the
// client node to these as it holds the server node to those
// (runner.sameNode), and compare lists a difference. Its name is the
// node's in the cluster; host, kernel and online CPU count are its
// agent's reading, blank (0) where the agent could not say: unknown,
// which differs from nothing.
type ClientNodeEnv struct {
	Name     string `json:"name"`
	Hostname string `json:"hostname,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
}
