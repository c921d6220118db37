package netns

// Iface is a network device in a namespace. Netns "" is the host (the
// init namespace); otherwise it is the name of a namespace under Dir
// (local engine) or a path the node agent resolves. It lives here, beside
// the code that enters namespaces, because everything that reads or
// writes a device (tunings, counters, perf) needs both.
type Iface struct {
	Netns string `json:"netns"`
	Name  string `json:"name"`
}
