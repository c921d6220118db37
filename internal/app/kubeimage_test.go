package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// --image given is passed on as such: a run without it takes the
// installed agent's image (kube.Config.ImageGiven), one with it must
// name that image.
func TestKubeImageGiven(t *testing.T) {
	for args, given := range map[string]bool{"": false, "--image x:1": true, "--image docker.io/cnibench/cnibench:dev": true} {
		var f kubeFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if got := f.config().ImageGiven; got != given {
			t.Errorf("%q: ImageGiven %v, want %v", args, got, given)
		}
	}
}
