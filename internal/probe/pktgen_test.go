package probe

import (
	"errors"
	"testing"
)

func TestPktgen(t *testing.T) {
	dir := t.TempDir()
	if err := pktgen(dir, func() error { return errors.New("unreachable") }); err != nil {
		t.Errorf("with %s present: %v", dir, err)
	}
	missing := dir + "/nope"
	if err := pktgen(missing, func() error { return nil }); err != nil {
		t.Errorf("module loadable: %v", err)
	}
	err := pktgen(missing, func() error { return errors.New("exit status 1") })
	if !errors.Is(err, ErrNoPktgen) {
		t.Errorf("neither: %v, want ErrNoPktgen", err)
	}
	t.Log(err)
	// This machine: reported either way, never an error other than ErrNoPktgen.
	if err := Pktgen(); err != nil && !errors.Is(err, ErrNoPktgen) {
		t.Errorf("Pktgen: %v", err)
	} else {
		t.Logf("this kernel: %v", err)
	}
}
