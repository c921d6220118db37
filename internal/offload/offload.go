// Package offload turns a network device's offload features on or off
// with ethtool inside a node, as `ethtool -K DEV FEATURE on|off` does (the
// seed-004 "Flannel-off" case disables VXLAN tunnel segmentation offload).
package offload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
)

// Starter runs a program on a node; engine.Node is one.
type Starter interface {
	Start(ctx context.Context, argv []string) (engine.Process, error)
}

// Set asks ethtool to turn one feature of dev on or off. One feature per
// call, so that a feature the device cannot change is told apart from one
// it does not know. ethtool exits 0 when the feature already has the
// requested value, even when it is fixed.
func Set(ctx context.Context, n Starter, dev, feature string, on bool) error {
	argv := []string{"ethtool", "-K", dev, feature, state(on)}
	p, err := n.Start(ctx, argv)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	_, _, err = p.Wait()
	if err == nil {
		return nil
	}
	var ee *engine.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s: %s", strings.Join(argv, " "), Explain(ee.Stderr, ee.Stdout))
	}
	return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
}

// Explain turns ethtool's complaint into one line: "not a feature" for an
// unknown name, "fixed on this device" when the device cannot change it.
func Explain(stderr, stdout []byte) string {
	all := string(bytes.TrimSpace(append(append([]byte{}, stderr...), stdout...)))
	switch {
	case strings.Contains(all, "bit name not found"):
		return "not a feature ethtool knows"
	case strings.Contains(all, "Could not change any device features"):
		return "fixed on this device (ethtool could not change it)"
	case all == "":
		return "ethtool failed without a message"
	}
	return strings.Join(strings.Fields(all), " ")
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
