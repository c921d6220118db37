package spec

import (
	"fmt"
	"slices"
)

// Flow is a way traffic goes between a workload's client and server.
// netem impairs only what a device sends, so an impairment place acts on
// one Flow; a tool's Data says which one carries what it measures.
type Flow string

// The flows.
const (
	ClientToServer Flow = "client->server"
	ServerToClient Flow = "server->client"
	// BothWays is a request/response tool's: requests and responses of
	// one size, each round trip crossing both ways.
	BothWays Flow = "both ways"
)

// Reverse is the other way; BothWays stays.
func (f Flow) Reverse() Flow {
	switch f {
	case ClientToServer:
		return ServerToClient
	case ServerToClient:
		return ClientToServer
	}
	return f
}

// Data says which way a tool's measured data goes.
type Data struct {
	// Flow is the way with the tool's options as they default (iperf3:
	// the client sends). A task (pod start-up) moves no data: "".
	Flow Flow
	// ReversedBy names the tool's boolean option that turns Flow
	// around (iperf3's reverse, -R); "" when none does.
	ReversedBy string
	// Sender names who sends the data, for a note ("the client sends",
	// ab's "the server sends its responses"), and Back what goes the
	// other way over TCP ("its ACKs", ab's "its requests and ACKs"):
	// what an impairment on the other way alone acts on. Over UDP
	// nothing of the measured data goes back. Each of the reversed
	// Flow too, with client and server swapped (FlowOf).
	Sender, Back string
}

// FlowOf is the way the tool's data goes with the options set (the
// names study.Workload.SetOptions gives: a boolean option is set when
// true), and who sends it then.
func (t Tool) FlowOf(set []string) (Flow, string) {
	d := t.Data
	if d.ReversedBy != "" && slices.Contains(set, d.ReversedBy) {
		return d.Flow.Reverse(), swapEnds(d.Sender)
	}
	return d.Flow, d.Sender
}

// swapEnds turns "the client sends" into "the server sends" and back.
func swapEnds(s string) string {
	switch s {
	case "the client sends":
		return "the server sends"
	case "the server sends":
		return "the client sends"
	}
	return s
}

func (d Data) check(t Tool) []error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: data flow: "+format, append([]any{t.Name}, a...)...)
	}
	if t.Task {
		if d != (Data{}) {
			return []error{bad("a task moves no data, yet states %+v", d)}
		}
		return nil
	}
	var errs []error
	switch d.Flow {
	case ClientToServer, ServerToClient:
		if d.Sender == "" || d.Back == "" {
			errs = append(errs, bad("%s needs who sends (Sender) and what goes back (Back)", d.Flow))
		}
	case BothWays:
	default:
		errs = append(errs, bad("%q is not client->server, server->client or both ways", d.Flow))
	}
	if d.ReversedBy != "" {
		if _, ok := t.Option(d.ReversedBy); !ok || d.Flow == BothWays {
			errs = append(errs, bad("reversed by %q, not an option of the tool, or its flow goes both ways", d.ReversedBy))
		}
		if swapEnds(d.Sender) == d.Sender {
			errs = append(errs, bad("reversed by %q, but its sender %q is not \"the client sends\" or \"the server sends\"", d.ReversedBy, d.Sender))
		}
	}
	return errs
}
