package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/engine/localengine"
)

// engines are where nodes and pods can come from (--engine), the first
// the default. A new engine is one package implementing engine.Engine
// and one line here.
var engines = []struct {
	name string
	new  func(Options) engine.Engine
}{
	{"local", func(o Options) engine.Engine { return localengine.New(o.ProcRoot) }},
	{"kube", func(o Options) engine.Engine { return kube.NewEngine(o.Kube) }},
}

// CheckEngine says whether name is an engine (empty: the default), for
// the command line to refuse a wrong --engine before it takes the host's
// run lock or makes the journal directory.
func CheckEngine(name string) error {
	_, err := newEngine(Options{Engine: name})
	return err
}

func newEngine(opt Options) (engine.Engine, error) {
	name := opt.Engine
	if name == "" {
		name = engines[0].name
	}
	var names []string
	for _, e := range engines {
		if e.name == name {
			return e.new(opt), nil
		}
		names = append(names, e.name)
	}
	return nil, fmt.Errorf("unknown engine %q (available: %s)", opt.Engine, strings.Join(names, ", "))
}
