package kube

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// describeServer fills env.json's machine facts with the server node's,
// as its agent describes them (serverMachine), and its tool versions
// with the image's (imageTools). The runner leaves both blank on a
// cluster: the controller's would pass for the node's. The image itself
// is recorded too: the tools' versions and the run's programs are its,
// and the run's log alone said which it was.
func describeServer(e *results.Env, srv *Node, image string, s *study.Study) {
	info, err := srv.Agent().Info()
	serverMachine(e, srv.Name(), info, err)
	e.Image = image
	imageTools(e, srv, image, s)
}

// serverMachine puts the server node's host, kernel, CPU model and
// count and NUMA nodes in e, from its agent's info. When the agent
// could not say (err), they are blank, with a note saying why: blank
// reads as unknown in the report and compare, where another machine's
// values would read as the node's.
func serverMachine(e *results.Env, node string, info agent.NodeInfo, err error) {
	if err != nil {
		info = agent.NodeInfo{}
		e.Notes = append(e.Notes, fmt.Sprintf("kube engine: server node %s's host, kernel, CPU model and count and NUMA nodes "+
			"could not be read through its agent (%v): env.json leaves them blank", node, err))
	}
	e.Hostname, e.Kernel, e.CPUModel = info.Hostname, info.Kernel, info.CPUModel
	e.CPUs, e.NUMANodes = info.CPUs, info.NUMANodes
}

// describeClient records the client node in e.ClientNode as
// describeServer records the server node: its name, and its host,
// kernel and CPU count as its agent reads them (clientMachine). A
// --resume holds the client node to them (a run killed on one client
// node and resumed on another would pool trials of two), and compare
// lists a difference; a note naming the node was all env.json had.
func describeClient(e *results.Env, cli *Node) {
	info, err := cli.Agent().Info()
	clientMachine(e, cli.Name(), info, err)
}

// clientMachine puts the client node's name, host, kernel and CPU
// count in e.ClientNode, from its agent's info; when the agent could
// not say (err), all but the name are blank (unknown), with a note
// saying why.
func clientMachine(e *results.Env, node string, info agent.NodeInfo, err error) {
	e.ClientNode = &results.ClientNodeEnv{Name: node}
	if err != nil {
		e.Notes = append(e.Notes, fmt.Sprintf("kube engine: client node %s's host, kernel and CPU count could not be read "+
			"through its agent (%v): env.json's client_node leaves them blank", node, err))
		return
	}
	e.ClientNode.Hostname, e.ClientNode.Kernel, e.ClientNode.CPUs = info.Hostname, info.Kernel, info.CPUs
}

// versionTimeout bounds one version query in the agent pod: the exec
// through the API server, then `TOOL --version`, which answers at once.
const versionTimeout = 10 * time.Second

// imageTools records in e.Tools the versions of the programs the study
// runs, and of ethtool (which read the offloads), as the image prints
// them in the server node's agent pod: the workload pods run the same
// image, whose iperf3 need not be the controller's. A version that
// cannot be read is left out, and the note says which.
func imageTools(e *results.Env, n offload.Starter, image string, s *study.Study) {
	progs := append(registry.StudyPrograms(s), spec.Program{Name: "ethtool", Version: []string{"ethtool", "--version"}})
	if e.Tools == nil {
		e.Tools = map[string]string{}
	}
	var missed []string
	for _, p := range progs {
		if v := imageVersion(n, p.Version); v != "" {
			e.Tools[p.Name] = v
		} else {
			missed = append(missed, p.Name)
		}
	}
	note := "kube engine: tool versions are those of image " + image + ", as its programs print them in the server node's agent pod " +
		"(the workload pods run the same image); go is the controller's cnibench build"
	if len(missed) > 0 {
		note += "; not read there: " + strings.Join(missed, ", ")
	}
	e.Notes = append(e.Notes, note)
}

// imageVersion is the first line argv prints in n (stdout, else stderr:
// nginx -v writes there); "" when it does not run there.
func imageVersion(n offload.Starter, argv []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	p, err := n.Start(ctx, argv)
	if err != nil {
		return ""
	}
	out, errOut, err := p.Wait()
	if err != nil {
		return ""
	}
	for _, b := range [][]byte{out, errOut} {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if l := strings.TrimSpace(string(line)); l != "" {
			return l
		}
	}
	return ""
}
