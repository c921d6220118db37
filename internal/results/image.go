package results

import (
	"fmt"
	"strings"
)

// ImageString is the workload pods' image in words: its reference and
// what the nodes resolved it to ("registry/cnibench:v1 (resolved to
// registry/cnibench@sha256:...)", or to each of several images), ""
// where the run recorded none (the local engine).
func (e Env) ImageString() string {
	switch ids := e.ImageIDs; {
	case e.Image == "":
		return ""
	case len(ids) == 0, len(ids) == 1 && ids[0] == e.Image:
		return e.Image
	case len(ids) == 1:
		return e.Image + " (resolved to " + ids[0] + ")"
	default:
		return fmt.Sprintf("%s (resolved to %d different images: %s)", e.Image, len(ids), strings.Join(ids, ", "))
	}
}
