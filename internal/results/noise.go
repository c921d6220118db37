package results

// Steal is the steal time the noise guard judges: the larger of the
// server node's and the client node's (when recorded), and the node it
// was on ("server" or "client"; "" when only the server's, or the one
// machine's, was recorded).
func (n Noise) Steal() (pct float64, node string) {
	switch {
	case n.ClientStealPct == nil:
		return n.StealPct, ""
	case *n.ClientStealPct > n.StealPct:
		return *n.ClientStealPct, "client"
	}
	return n.StealPct, "server"
}
