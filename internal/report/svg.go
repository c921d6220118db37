package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette is Okabe–Ito: distinguishable with the common colour-vision
// deficiencies. Series also differ by glyph shape, so the figures survive
// greyscale printing.
var palette = []color.Color{
	rgb(0x00, 0x72, 0xB2), rgb(0xE6, 0x9F, 0x00), rgb(0x00, 0x9E, 0x73), rgb(0xD5, 0x5E, 0x00),
	rgb(0xCC, 0x79, 0xA7), rgb(0x56, 0xB4, 0xE9), rgb(0x00, 0x00, 0x00), rgb(0xF0, 0xE4, 0x42),
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PlusGlyph{},
}

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

func seriesColor(i int) color.Color      { return palette[i%len(palette)] }
func seriesShape(i int) draw.GlyphDrawer { return shapes[i%len(shapes)] }
func sans(size vg.Length) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

// refGlyph marks a published number: a bold ×, unlike any series glyph.
func refGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(5), Shape: boldCross{}}
}

// boldCross is draw.CrossGlyph with a thicker stroke, so a published
// marker stays visible on top of a bar or an error bar.
type boldCross struct{}

func (boldCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(2)}
	r := sty.Radius * 0.8
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// newPlot returns a plot with the report's fonts.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(12)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
		// Round steps labelled with the decimals they need: gonum's
		// default labelled a 0-500 Mbit/s axis "0.00, 250.00, 500.00".
		// A figure with named or logarithmic ticks sets its own.
		a.Tick.Marker = niceTicks{}
	}
	return p
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sans(10)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(16)
	return l
}

// legendWidth is how wide the legend column must be.
func legendWidth(l plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X
}

// renderSVG draws the plot with the legend in a column to its right (so it
// never hides data) and returns SVG ready to inline in HTML.
func renderSVG(p *plot.Plot, leg plot.Legend, w, h vg.Length, title string) (template.HTML, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	dc.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: w, Y: 0}, {X: w, Y: h}, {X: 0, Y: h}})
	// The width is measured in gonum's font; browsers draw the SVG's text
	// in theirs, which can be a little wider ("bg-inter@bg20" lost its
	// last character in Chromium): leave them a sixth more.
	lw := legendWidth(leg)*7/6 + vg.Points(12)
	p.Title.Text = wrapTitle(p.Title.TextStyle, p.Title.Text, (w-lw)*6/7)
	if err := drawSafely(func() {
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		leg.Draw(draw.Crop(dc, w-lw+vg.Points(8), 0, 0, -vg.Points(28)))
	}); err != nil {
		return "", fmt.Errorf("draw %q: %w", title, err)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("encode %q: %w", title, err)
	}
	return inlineSVG(buf.Bytes(), title), nil
}

// wrapTitle breaks a title wider than width into lines at its spaces (a
// figure of seven workloads names all seven; gonum would crop the line at
// the figure's edges). A word wider than width stays whole.
func wrapTitle(sty text.Style, title string, width vg.Length) string {
	if sty.Width(title) <= width {
		return title
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(title) {
		switch {
		case line == "":
			line = word
		case sty.Width(line+" "+word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// drawSafely turns a panic inside gonum/plot (it panics on some degenerate
// inputs) into an error, so one bad figure does not cost the whole report.
func drawSafely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: %v", r)
		}
	}()
	f()
	return nil
}

var (
	prologRE  = regexp.MustCompile(`(?s)^\s*<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
	svgOpenRE = regexp.MustCompile(`(?s)<svg[^>]*>`)
	// vgsvg names the font family bare; add fallbacks with the same
	// metrics (Arial, Helvetica) for browsers without Liberation fonts.
	fontRE = regexp.MustCompile(`font-family:Liberation Sans;`)
)

// inlineSVG strips the XML prolog (not allowed inside HTML), adds an
// accessible title and lets CSS scale the figure.
func inlineSVG(svg []byte, title string) template.HTML {
	s := prologRE.ReplaceAll(svg, nil)
	s = fontRE.ReplaceAll(s, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
	loc := svgOpenRE.FindIndex(s)
	if loc != nil {
		open := bytes.Replace(s[loc[0]:loc[1]], []byte("<svg "), []byte(`<svg role="img" class="fig" `), 1)
		rest := append([]byte("<title>"+html.EscapeString(title)+"</title>\n"), s[loc[1]:]...)
		s = append(append(append([]byte{}, s[:loc[0]]...), open...), rest...)
	}
	return template.HTML(s) // generated by us; vgsvg escapes every text it draws
}

// finite reports whether v can be drawn.

// niceTicks labels round values (steps of 1, 2, 2.5 or 5 × 10^k, about
// five or six of them) with a fixed number of decimals. gonum's default ticker
// may skip the value 1 on a normalized axis, the one value every reader
// looks for.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	if math.Abs(step/math.Pow(10, -float64(dec))-math.Round(step/math.Pow(10, -float64(dec)))) > 1e-9 {
		dec++ // 2.5 × 10^k needs one more decimal
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+1e-9*step; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	if first := math.Ceil(lo/step-1e-9)*step - step/2; first >= lo {
		ticks = append(ticks, plot.Tick{Value: first})
	}
	return ticks
}
