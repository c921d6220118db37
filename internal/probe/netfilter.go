package probe

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/netns"
)

// What a datapath's netfilter state (the netfilter knob) needs of the
// kernel beyond the programs being installed: that iptables-restore can
// build rules of the kinds every CNI generator writes, that nft can
// load a table, and for an IPVS Service proxy a dummy device and the
// ipsets its rules match. Each is tried in the scratch namespace, as
// the run does it in a node's.

// iptablesProbeRules is a small rule set of the matches and targets the
// CNIs' generators and kube-proxy all write (internal/netfilter):
// comment, conntrack, mark and MARK, addrtype, MASQUERADE.
const iptablesProbeRules = `*filter
:CNBPROBE - [0:0]
-A CNBPROBE -m comment --comment "cnibench probe" -m conntrack --ctstate INVALID -j DROP
-A CNBPROBE -m mark --mark 0x4000/0x4000 -j ACCEPT
COMMIT
*nat
:CNBPROBE - [0:0]
-A CNBPROBE -m addrtype --dst-type LOCAL -j RETURN
-A CNBPROBE -j MARK --set-xmark 0x4000/0x4000
-A CNBPROBE -j MASQUERADE
COMMIT
`

// nftProbeTable is a table in the shape of kube-proxy's nftables mode:
// an inet table with a base chain that matches conntrack state.
const nftProbeTable = `table inet cnbprobe {
	chain forward {
		type filter hook forward priority 0; policy accept;
		ct state invalid drop
	}
}
`

// IPSetTypes are the set types the IPVS Service proxies create
// (kube-proxy's ipvs mode and kube-router's proxy, internal/netfilter's
// Layout); knob's tests check that list against this one.
var IPSetTypes = []string{"hash:ip", "hash:ip,port", "hash:ip,port,ip", "bitmap:port"}

// tryIptables has iptables-restore check the rule set in the scratch
// namespace: with --test it parses it and resolves each match and target
// against the kernel (which loads their modules) without committing.
// Equivalent to: ip netns exec SCRATCH iptables-restore --test --noflush < RULES
func (s *scratch) tryIptables() (bool, string) {
	path, err := ToolPath(ToolIptablesRestore)
	if err != nil {
		return false, "not probed: iptables-restore is not installed (see " + ToolIptablesRestore + ")"
	}
	if out, err := s.run([]string{path, "--test", "--noflush"}, iptablesProbeRules); err != nil {
		return false, "iptables-restore --test of a rule set of the matches every CNI writes (comment, conntrack, mark, addrtype, MASQUERADE) " +
			"failed in a new network namespace: " + firstLine(out, err) + " (the kernel lacks x_tables or one of the xt_ modules, or the iptables build its extensions)"
	}
	return true, ""
}

// tryNFTables has nft check a table in the scratch namespace: -c sends
// the batch to the kernel and takes it back, committing nothing.
// Equivalent to: ip netns exec SCRATCH nft -c -f - < TABLE
func (s *scratch) tryNFTables() (bool, string) {
	path, err := ToolPath(ToolNft)
	if err != nil {
		return false, "not probed: nft is not installed (see " + ToolNft + ")"
	}
	if out, err := s.run([]string{path, "-c", "-f", "-"}, nftProbeTable); err != nil {
		return false, "nft -c of an inet table with a conntrack rule failed in a new network namespace: " + firstLine(out, err) +
			" (the kernel lacks nf_tables, CONFIG_NF_TABLES, or nft_ct)"
	}
	return true, ""
}

// tryIPSet creates a set of each type the IPVS proxies use, with
// comments as they ask, and destroys it.
// Equivalent to: ipset create cnbprobe TYPE comment; ipset destroy cnbprobe
func (s *scratch) tryIPSet() (bool, string) {
	for _, typ := range IPSetTypes {
		opts := netlink.IpsetCreateOptions{Replace: true, Comments: true}
		if typ == "bitmap:port" {
			opts.PortFrom, opts.PortTo = 0, 65535
		}
		if err := s.h.IpsetCreate("cnbprobe", typ, opts); err != nil {
			return false, failed("creating an ipset of type "+typ, "ip_set_"+strings.ReplaceAll(strings.ReplaceAll(typ, ":", "_"), ",", ""), err)
		}
		if err := s.h.IpsetDestroy("cnbprobe"); err != nil {
			return false, failed("destroying the ipset of type "+typ, "ip_set", err)
		}
	}
	return true, ""
}

// run runs argv in the scratch namespace with stdin, and returns what
// it printed; 10 s at most, as every probe's program.
func (s *scratch) run(argv []string, stdin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = strings.NewReader(stdin)
	if err := netns.Start(s.ns, nil, cmd); err != nil {
		return "", fmt.Errorf("%s in netns %s: %w", argv[0], s.ns, err)
	}
	err := cmd.Wait()
	return out.String(), err
}
