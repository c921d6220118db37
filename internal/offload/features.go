package offload

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"time"
)

// Features reads `ethtool -k DEV` inside the node; nil when ethtool is
// missing or fails (env.json is documentation, not a precondition).
func Features(n Starter, dev string) map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := show(ctx, n, dev)
	if out == nil {
		return nil
	}
	return ParseFeatures(out)
}

// show reads `ethtool -k dev` inside the node; nil when it cannot.
func show(ctx context.Context, n Starter, dev string) []byte {
	p, err := n.Start(ctx, []string{"ethtool", "-k", dev})
	if err != nil {
		return nil
	}
	out, _, err := p.Wait()
	if err != nil {
		return nil
	}
	return out
}

// ParseFeatures reads `ethtool -k` output ("name: on [fixed]").
func ParseFeatures(out []byte) map[string]bool {
	m := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || k == "" || strings.HasPrefix(k, "Features for") {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, "on"):
			m[k] = true
		case strings.HasPrefix(v, "off"):
			m[k] = false
		}
	}
	return m
}

// shortNames are ethtool -K's short feature names and the long names
// `ethtool -k` prints for them.
var shortNames = map[string]string{
	"gro": "generic-receive-offload", "gso": "generic-segmentation-offload", "tso": "tcp-segmentation-offload",
	"lro": "large-receive-offload", "sg": "scatter-gather", "rx": "rx-checksumming", "tx": "tx-checksumming",
	"rxvlan": "rx-vlan-offload", "txvlan": "tx-vlan-offload", "ntuple": "ntuple-filters", "rxhash": "receive-hashing",
}

// LongName is the name `ethtool -k` prints for a feature given to -K.
func LongName(feature string) string {
	if l, ok := shortNames[feature]; ok {
		return l
	}
	return feature
}
