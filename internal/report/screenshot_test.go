package report

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// TestScreenshot renders the synthetic reports (rps-rfs, and the
// workloads study with its sweeps) in headless Chromium and checks the
// pages are not blank: a broken template or SVG that the browser refuses
// still passes string checks, but not this one. Set
// CNIBENCH_SCREENSHOT=path.png to keep the images for a look (the
// workloads one as path-workloads.png).
func TestScreenshot(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("chromium (or chromium-browser) is not on PATH; install it to render the report")
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, dir string)
	}{
		{"rps-rfs", func(t *testing.T, dir string) { writeSyntheticRun(t, dir) }},
		{"workloads", writeWorkloadsRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			tc.write(t, dir)
			if err := Build(dir); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "report.png")
			if keep := os.Getenv("CNIBENCH_SCREENSHOT"); keep != "" {
				out = keep
				if tc.name != "rps-rfs" {
					out = strings.TrimSuffix(keep, filepath.Ext(keep)) + "-" + tc.name + filepath.Ext(keep)
				}
			}
			if err := screenshot(t, browser, filepath.Join(dir, results.ReportHTML), out); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			// Text, axes and figures in several colours give thousands of
			// distinct colours (anti-aliasing); a blank or error page gives
			// a few.
			if n := distinctColours(img, 5000); n < 200 {
				t.Errorf("screenshot has %d distinct colours; the page looks blank", n)
			}
		})
	}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// screenshot runs the browser with an argument vector (never a shell) and a
// throw-away profile.
func screenshot(t *testing.T, browser, htmlPath, png string) error {
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--screenshot="+png, "--window-size=1200,3000",
		"file://"+abs)
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("%s output:\n%s", browser, outb)
	}
	return err
}

func distinctColours(img image.Image, limit int) int {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bl>>8] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
