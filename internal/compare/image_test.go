package compare

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// Two cluster runs on different images differ in it: the programs that
// measured are the image's. By tag, one reference may be two images,
// which the images the nodes resolved it to tell (image_ids), compared
// by digest whatever name the runtime wrote; one image by two
// references (a tag and its digest) is no difference. What a run did
// not record holds the other to nothing: a local run has no image, a
// run before image_ids no resolved one.
func TestDifferencesWorkloadImage(t *testing.T) {
	const (
		tag  = "reg/cnibench:v1"
		idA  = "reg/cnibench@sha256:aaaa"
		idB  = "reg/cnibench@sha256:bbbb"
		pinA = "reg/cnibench@sha256:aaaa"
		// loaded is containerd's ID of an image loaded, not pulled.
		loaded = "sha256:cccc"
	)
	kube := func(image string, ids ...string) results.Env {
		return results.Env{Engine: "kube", Image: image, ImageIDs: ids}
	}
	for _, tc := range []struct {
		name string
		a, b results.Env
		want string // "" for no difference
	}{
		{"one tag, one image", kube(tag, idA), kube(tag, idA), ""},
		{"one tag, two images", kube(tag, idA), kube(tag, idB),
			"workload image reg/cnibench:v1 (resolved to " + idA + ") / reg/cnibench:v1 (resolved to " + idB + ")"},
		{"two images on B's nodes", kube(tag, idA), kube(tag, idA, idB),
			"workload image reg/cnibench:v1 (resolved to " + idA + ") / reg/cnibench:v1 (resolved to 2 different images: " + idA + ", " + idB + ")"},
		{"two references", kube("reg/cnibench:v1"), kube("reg/cnibench:v2"), "workload image reg/cnibench:v1 / reg/cnibench:v2"},
		{"a tag and its digest", kube(tag, idA), kube(pinA, pinA), ""},
		{"one image, two runtimes' names", kube(tag, "docker-pullable://"+idA), kube(tag, idA), ""},
		{"B's resolved image not recorded", kube(tag, idA), kube(tag), ""},
		// containerd reports an image loaded with kind load or ctr
		// import by its own ID, its config's digest, and one pulled by
		// its registry's manifest digest: one image, two digests, which
		// were a difference. Only the references compare then.
		{"one reference, pulled and loaded", kube(tag, idA), kube(tag, loaded),
			"workload image reg/cnibench:v1 (resolved to " + idA + ") / reg/cnibench:v1 (resolved to " + loaded +
				") (resolved as a registry's digest / a loaded image's ID, which cannot be compared: by reference they are one)"},
		{"two references, loaded and pulled", kube("reg/cnibench:v2", loaded), kube(tag, idA),
			"workload image reg/cnibench:v2 (resolved to " + loaded + ") / reg/cnibench:v1 (resolved to " + idA +
				") (resolved as a loaded image's ID / a registry's digest, which cannot be compared: by reference they differ)"},
		{"both mixed, the same images", kube(tag, idA, loaded), kube(tag, idA, loaded), ""},
		{"both mixed", kube(tag, idA, loaded), kube(tag, idB, loaded),
			"workload image reg/cnibench:v1 (resolved to 2 different images: " + idA + ", " + loaded + ") / " +
				"reg/cnibench:v1 (resolved to 2 different images: " + idB + ", " + loaded + ") (resolved as both registry digests and loaded images' IDs" +
				" / both registry digests and loaded images' IDs, which cannot be compared: by reference they are one)"},
		{"one loaded image", kube(tag, loaded), kube(tag, "docker://"+loaded), ""},
		{"two loaded images", kube(tag, loaded), kube(tag, "sha256:dddd"),
			"workload image reg/cnibench:v1 (resolved to " + loaded + ") / reg/cnibench:v1 (resolved to sha256:dddd)"},
		{"local runs", results.Env{Engine: "local"}, results.Env{Engine: "local"}, ""},
	} {
		got := strings.Join(Differences(tc.a, tc.b, nil), "; ")
		if got != tc.want {
			t.Errorf("%s: differ %q, want %q", tc.name, got, tc.want)
		}
	}
	// Against a local run the engine differs; no image line is added.
	if got := strings.Join(Differences(results.Env{Engine: "local"}, kube(tag, idA), nil), "; "); got != "engine local / kube" {
		t.Errorf("local against kube: differ %q, want the engine alone", got)
	}
	h := NewHead("a/", "b/", &results.Run{Env: kube(tag, idA), HasEnv: true}, &results.Run{Env: kube(tag, idB), HasEnv: true}, nil, nil, false)
	if notes := strings.Join(h.notes(), "\n"); !strings.Contains(notes, "The runs differ in: workload image reg/cnibench:v1 (resolved to "+idA) {
		t.Errorf("notes lack the image:\n%s", notes)
	}
}
