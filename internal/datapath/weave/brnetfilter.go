package weave

// WithoutBrNetfilter says what the datapath misses where br_netfilter
// is absent. The local engine reads it (a datapath that has it runs
// without the module unless its study entry has netfilter:, which then
// requires it) and records it in env.json's notes.
func (*Datapath) WithoutBrNetfilter() string {
	return "bridged pod-to-pod packets on one node skip iptables, unlike a real Weave node"
}
