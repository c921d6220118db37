package compare

// What Differences says of two cluster runs' workload images and two
// local runs' machine CPUs: each needs more than "A / B" to be read.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// imageDifference is Differences' line on the runs' workload images, ""
// where they do not differ (imagePair).
func imageDifference(a, b results.Env) string {
	x, y, forms := imagePair(a, b)
	switch {
	case forms != "":
		// A registry's digest and a loaded image's ID differ though
		// they name one image: whether the images are one is untold.
		by := "differ"
		if x == y {
			by = "are one"
		}
		return fmt.Sprintf("workload image %s / %s (resolved as %s, which cannot be compared: by reference they %s)",
			a.ImageString(), b.ImageString(), forms, by)
	case x != y:
		return fmt.Sprintf("workload image %s / %s", orNone(a.ImageString()), orNone(b.ImageString()))
	}
	return ""
}

// machineCPUsDifference is Differences' line on the CPUs two local runs
// counted as the machine's, "" where they agree (machineCPUsPair) or the
// engines differ (the engine's line says more; a cluster records none).
func machineCPUsDifference(a, b results.Env) string {
	x, y := machineCPUsPair(a, b)
	if x == y || a.Engine != b.Engine {
		return ""
	}
	return fmt.Sprintf("machine CPUs %s / %s (env.json's machine_cpus: node CPU %% and the one-core "+
		"judgement count only these, and every CPU of /proc/stat in a run that did not record them, so in a "+
		"container given fewer CPUs than the host has they move by the counting alone)", x, y)
}

// imagePair says the workload images of two runs (a cluster's: the
// programs that measured are the image's) as Differences compares them:
// the images the nodes resolved them to where both runs recorded that
// in one form, by digest (one image under two references, a tag and its
// digest, is no difference; one tag pulled as two images is), else the
// references. forms, where it is not "", says why the references are
// compared though both runs recorded resolved images: their forms
// ("a registry's digest / a loaded image's ID", imageIDForm) differ, and
// a registry's digest and a loaded image's ID are digests of different
// things, one image having both. A run with no image (the local engine,
// a run before it was recorded) holds the other to nothing: "", "".
func imagePair(a, b results.Env) (x, y, forms string) {
	if a.Image == "" || b.Image == "" {
		return "", "", ""
	}
	if len(a.ImageIDs) == 0 || len(b.ImageIDs) == 0 {
		return a.Image, b.Image, ""
	}
	digests := func(ids []string) string {
		var out []string
		for _, id := range ids {
			// "NAME@sha256:..." or "docker://sha256:...", by whatever
			// name and scheme the runtime wrote it.
			if _, d, ok := strings.Cut(id, "@"); ok {
				id = d
			} else if _, d, ok := strings.Cut(id, "://"); ok {
				id = d
			}
			out = append(out, id)
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), ", ")
	}
	x, y = digests(a.ImageIDs), digests(b.ImageIDs)
	// Both runs mixed is no one form either, unless they hold the same
	// images: which of A's is which of B's is untold.
	if fa, fb := imageIDForm(a.ImageIDs), imageIDForm(b.ImageIDs); x != y && (fa != fb || fa == mixedForms) {
		return a.Image, b.Image, fa + " / " + fb
	}
	return x, y, ""
}

// mixedForms is imageIDForm's word for a run whose nodes reported both.
const mixedForms = "both registry digests and loaded images' IDs"

// imageIDForm says what a run's image IDs are digests of: a registry's
// manifest ("NAME@sha256:...", containerd's for an image pulled from a
// registry) or the image's own ID, its config's digest ("sha256:...", no
// name: containerd's for an image loaded with `kind load` or `ctr
// import`, which no registry named). One image has both, unequal.
func imageIDForm(ids []string) string {
	var form string
	for _, id := range ids {
		f := "a loaded image's ID"
		if strings.Contains(id, "@") {
			f = "a registry's digest"
		}
		if form != "" && f != form {
			return mixedForms
		}
		form = f
	}
	return form
}

// machineCPUsPair says the CPUs two local runs counted as this machine's
// (env.json's machine_cpus), "" for both where neither recorded them (a
// cluster, or two runs before they were): only one run's recorded, or
// two different sets, move node CPU % and the one-core judgement by the
// counting alone.
func machineCPUsPair(a, b results.Env) (string, string) {
	if a.MachineCPUs == nil && b.MachineCPUs == nil {
		return "", ""
	}
	of := func(cpus []int) string {
		if cpus == nil {
			return "not recorded (every CPU of /proc/stat)"
		}
		return cpuset.Set(cpus).String()
	}
	return of(a.MachineCPUs), of(b.MachineCPUs)
}
