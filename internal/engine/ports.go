package engine

// The ports every engine and driver agree on.
const (
	// BasePort is iperf3's default port. The i-th server pod of a cluster
	// (measured or carrying background load) listens on BasePort+i, and
	// a front in front of it forwards that port, TCP and UDP: the kube
	// engine's Service of that pod, or on the local engine the ClusterIP
	// of knob service-path.
	BasePort = 5201
	// SecondPortOffset places a second TCP listener of a server (qperf's
	// test socket, which cannot share the control connection's port) at
	// its port + SecondPortOffset. The kube engine's Services forward it
	// too (TCP), so such a tool runs behind them; knob service-path's
	// modelled Services do not (their rules are the paper's, one port a
	// Service). Pods never exceed 250 a node, so the two ranges stay
	// apart.
	SecondPortOffset = 1000
)
