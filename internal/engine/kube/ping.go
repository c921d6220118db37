package kube

import "github.com/cnibench/cnibench/internal/agent"

func agentPing() agent.Request { return agent.Request{Op: agent.OpPing} }
