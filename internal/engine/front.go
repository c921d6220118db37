package engine

import (
	"context"
	"net"
)

// Front returns p reached through a front address ip (a ClusterIP):
// Addr and FrontIP say ip, everything else is p's.
func Front(p Pod, ip net.IP) Pod {
	f := fronted{Pod: p, ip: ip}
	if h, ok := p.(Helper); ok {
		return frontedHelper{f, h}
	}
	return f
}

// Unfront returns p reached at its own IP even when it is Fronted (the
// kube engine's Service): `target: pod` on a cluster.
func Unfront(p Pod) Pod {
	if h, ok := p.(Helper); ok {
		return bareHelper{bare{p}, h}
	}
	return bare{p}
}

type fronted struct {
	Pod
	ip net.IP
}

func (f fronted) Addr() string    { return f.ip.String() }
func (f fronted) FrontIP() net.IP { return f.ip }
func (f fronted) unwrap() Pod     { return f.Pod }

type frontedHelper struct {
	fronted
	h Helper
}

func (f frontedHelper) HelperArgv(args ...string) []string { return f.h.HelperArgv(args...) }

// bare hides every method but Pod's (so not Fronted).
type bare struct{ p Pod }

func (b bare) Name() string { return b.p.Name() }
func (b bare) Node() string { return b.p.Node() }
func (b bare) IP() net.IP   { return b.p.IP() }
func (b bare) Start(ctx context.Context, argv []string) (Process, error) {
	return b.p.Start(ctx, argv)
}
func (b bare) unwrap() Pod { return b.p }

type bareHelper struct {
	bare
	h Helper
}

func (b bareHelper) HelperArgv(args ...string) []string { return b.h.HelperArgv(args...) }
