package workload

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/impair"
)

// DatagramHazards says what an impairment does to a UDP workload's
// datagrams that a request/response client waiting for each reply
// without a timeout cannot survive: it loses them, corrupts them (a
// datagram that fails its checksum is dropped) or duplicates them. Nil
// for TCP, which retransmits, and for an impairment that does none of
// these (delay, rate); an impairment that does not resolve is its own
// validation's to report.
func DatagramHazards(protocol, name string, fields map[string]string) []string {
	if protocol != "udp" {
		return nil
	}
	s, err := impair.Resolve(name, fields)
	if err != nil {
		return nil
	}
	var what []string
	switch {
	case s.GE != nil:
		what = append(what, "loses datagrams (gemodel)")
	case s.Loss > 0:
		what = append(what, fmt.Sprintf("loses datagrams (loss %g%%)", s.Loss))
	}
	if s.Corrupt > 0 {
		what = append(what, fmt.Sprintf("corrupts them (corrupt %g%%: a datagram that fails its checksum is dropped)", s.Corrupt))
	}
	if s.Duplicate > 0 {
		what = append(what, fmt.Sprintf("duplicates them (duplicate %g%%)", s.Duplicate))
	}
	return what
}

// RefuseDatagramHazards is a request/response driver's RefuseImpairment
// for a UDP client that waits for each reply without resending: "it
// loses datagrams (loss 5%) and ..., and " followed by why, the tool's
// own account; "" where DatagramHazards finds none.
func RefuseDatagramHazards(protocol, name string, fields map[string]string, why string) string {
	what := DatagramHazards(protocol, name, fields)
	if len(what) == 0 {
		return ""
	}
	return "it " + strings.Join(what, " and ") + ", and " + why
}
