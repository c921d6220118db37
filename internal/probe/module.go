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
// -n stops there. The probes that must not load a module (ipvs, a
// sysctl's value, pktgen) ask it; a variable for tests.
// Equivalent to: modprobe -n -q MODULE
var modprobeDryRun = func(module string) error {
	path, err := exec.LookPath("modprobe")
	if err != nil {
		return errors.New("modprobe is not installed (kmod), so whether the module exists is unknown")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-n", "-q", module).CombinedOutput()
	if err != nil {
		return fmt.Errorf("modprobe -n %s: %s", module, firstLine(string(out), err))
	}
	return nil
}
