package collect

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
)

// pickIptables reads both backends' rules on n with their counters
// (iptables-legacy-save -c and iptables-nft-save -c, where the node has
// them) and keeps, for both ends of the window, the backend kube-proxy's
// iptables-wrapper would pick (iptables.PickSave): the image's default
// iptables-save sees its own backend alone, and a node's kube-proxy may
// write the other's, whose rules it would count as none. out is the
// picked backend's read; where neither holds a rule it is nil and argv
// the default iptables-save, as before. The warning says where the other
// backend holds rules too, without their number, so that the runner says
// it once however that number moves.
func pickIptables(ctx context.Context, n engine.Node, run func(context.Context, engine.Node, []string) ([]byte, error)) (argv []string, out []byte, warning string) {
	legacy, _ := run(ctx, n, []string{iptables.LegacySave, "-c"})
	nft, _ := run(ctx, n, []string{iptables.NftSave, "-c"})
	save, other, _ := iptables.PickSave(legacy, nft)
	switch save {
	case iptables.LegacySave:
		out = legacy
	case iptables.NftSave:
		out = nft
	}
	if other != "" {
		warning = fmt.Sprintf("%s holds rules too, which iptables_* leave out: they count the rules %s reads, the backend kube-proxy's iptables-wrapper would pick", other, save)
	}
	return []string{save, "-c"}, out, warning
}
