package calicoipip

import (
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
)

// On a kernel up to 5.7.0 tunl0 loses tx checksumming and TSO, as
// Felix turns them off (calicopod.FelixTxOff); on a later one it keeps
// them.
func TestTxOffAsFelix(t *testing.T) {
	dptest.CalicoTunnelTxOff(t, func(release string) datapath.Datapath {
		d := New()
		d.TxOff.Release = release
		return d
	}, Device)
}
