package probe

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// modprobeDryRun reports whether module can be loaded, or is built in,
// without loading it: modprobe resolves the name (an alias too) against
// this kernel's modules.dep, modules.alias and modules.builtin, and with
// -n stops there. The probes that must not load a module (ipvs, pktgen,
// a congestion control before Linux 4.15) ask it; a variable for tests.
// Without -q, modprobe says why it failed (no such module, or no
// /lib/modules for this kernel, as in a container), which the refusal
// passes on rather than blaming the kernel's configuration.
// Equivalent to: modprobe -n MODULE
var modprobeDryRun = func(module string) error {
	path, err := exec.LookPath("modprobe")
	if err != nil {
		return errors.New("modprobe is not installed (kmod), so whether the module exists is unknown")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-n", module).CombinedOutput()
	if err != nil {
		return fmt.Errorf("modprobe -n %s: %s", module, firstLine(string(out), err))
	}
	return nil
}
