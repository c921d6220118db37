package knob

// linkRateEntry is spec.link.rate. The local engine shapes each node's
// underlay while it builds it (engine/local, shape.go: a tbf qdisc that
// charges Ethernet framing per packet), so the shaping is there before
// any datapath device is stacked on the underlay, and goes with the node
// namespaces. It is listed so that this list shows every knob a study
// can turn; the kube engine refuses it.
var linkRateEntry = Entry{
	Name:    "link-rate",
	Changes: "egress rate of each emulated node's underlay (tbf qdisc with Ethernet framing overhead), spec.link.rate",
	Scope:   Build,
	Wanted:  func(t *Target) bool { return t.Study != nil && t.Study.Spec.Link.Rate != "" },
	Needs:   func(*Target) []string { return nil },
}
