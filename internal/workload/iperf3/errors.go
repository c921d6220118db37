package iperf3

import (
	"errors"
	"strings"
)

// Kinds of iperf3 failure callers branch on (errors.Is on a *ToolError).
var (
	// ErrConnect: the client could not reach the server ("unable to
	// connect to server: Connection refused", a connect timeout, no route).
	ErrConnect = errors.New("iperf3 could not connect to the server")
	// ErrServerBusy: the server was already running another test.
	ErrServerBusy = errors.New("iperf3 server busy with another test")
	// ErrInterrupted: this end got a signal ("interrupt - the client has
	// terminated").
	ErrInterrupted = errors.New("iperf3 interrupted")
	// ErrPeerTerminated: the other end went away during the test.
	ErrPeerTerminated = errors.New("iperf3 peer ended the test early")
	// ErrListen: the server could not listen (port in use).
	ErrListen = errors.New("iperf3 server could not listen")
)

// ToolError is an error iperf3 reported in the "error" field of its JSON
// output. Note that iperf3 3.12 exits with status 0 after some of them
// (connection refused, server busy), so the JSON, not the exit status, is
// what tells success from failure.
type ToolError struct {
	// Msg is iperf3's own message.
	Msg  string
	kind error
}

func newToolError(msg string) *ToolError {
	m := strings.ToLower(msg)
	e := &ToolError{Msg: msg}
	switch {
	case strings.HasPrefix(m, "interrupt"):
		e.kind = ErrInterrupted
	case strings.Contains(m, "server is busy"):
		e.kind = ErrServerBusy
	case strings.Contains(m, "unable to connect"), strings.Contains(m, "connection refused"):
		e.kind = ErrConnect
	case strings.Contains(m, "has terminated"):
		e.kind = ErrPeerTerminated
	case strings.Contains(m, "unable to start listener"):
		e.kind = ErrListen
	}
	return e
}

func (e *ToolError) Error() string { return "iperf3: " + e.Msg }

// Unwrap returns the kind (ErrConnect, ...), or nil for other messages.
func (e *ToolError) Unwrap() error { return e.kind }
