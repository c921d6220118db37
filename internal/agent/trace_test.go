package agent

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/nftrace"
)

// TestTraceStopCounts: every count of the agent's path (pathCounts, as
// handleTrace sends it) reaches the client's, the lost events included.
func TestTraceStopCounts(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go func() {
		var req Request
		if err := json.NewDecoder(reqR).Decode(&req); err != nil || req.Op != OpTraceStop {
			respW.CloseWithError(io.ErrUnexpectedEOF)
			return
		}
		b, _ := json.Marshal(Response{ID: req.ID, Counts: pathCounts(nftrace.Path{Chains: 1, Rules: 2, Packets: 3, Lost: 4})})
		_, _ = respW.Write(append(b, '\n'))
	}()
	p, err := NewClient(reqW, respR).TraceStop()
	if want := (nftrace.Path{Chains: 1, Rules: 2, Packets: 3, Lost: 4}); err != nil || p != want {
		t.Errorf("TraceStop = %+v, %v; want %+v", p, err, want)
	}
}
