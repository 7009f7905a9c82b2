package statsview

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mcpgram/mcpgram/store"
)

// /stats' chart: turns over time, where bars read better than a column
// of numbers. gonum.org/v1/plot draws it, with its own fonts (Liberation,
// built in), so it needs nothing installed: a legend at the top, then
// the last 24 hours by hour and the last 7 days by day, each with
// labelled axes, sized for a phone.

// Colours of the bars; a turn is answered (an answer, a question or an
// approval request), failed (an error, the turn limit), or stopped
// (cancelled, refused over the budget).
var (
	chartAnswered = color.RGBA{0x2e, 0x9e, 0x4f, 0xff}
	chartFailed   = color.RGBA{0xd6, 0x3c, 0x3c, 0xff}
	chartStopped  = color.RGBA{0x9a, 0x9a, 0x9a, 0xff}
)

// Colors are the bars' colours: answered, failed, stopped.
var Colors = [3]color.RGBA{chartAnswered, chartFailed, chartStopped}

// kinds name the bars' three parts, in the order of Colors.
var kinds = [3]string{"answered", "failed", "stopped"}

// The chart's size: 1080 by 1350 pixels (the 4:5 of a phone's photo), at
// 216 dots per inch, so that a point is 3 pixels and 12-point text stays
// readable when a phone shows the picture a screen wide.
const (
	chartDPI              = 216
	chartWidth  vg.Length = 360 // points
	chartHeight vg.Length = 450
)

// A Panel says where a panel's bars are in the chart's pixels: the
// centre of each bar, the line of zero, and the pixels a turn is tall.
type Panel struct {
	BarX []int
	Base int
	Unit float64
}

// A Layout is where Chart drew: the day's panel, then the week's.
type Layout struct {
	Panels [2]Panel
}

// kindOfOutcome sorts a turn's outcome into a bar's three parts.
func kindOfOutcome(outcome string) int {
	switch outcome {
	case "answer", "question", "approval":
		return 0
	case "error", "limit":
		return 1
	}
	return 2
}

// Chart draws day (hourly buckets) and week (daily buckets) as stacked
// bars, oldest on the left, now on the right, and returns the PNG and
// where the bars are.
func Chart(day, week []store.Bucket) ([]byte, Layout, error) {
	var lay Layout
	c := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI))
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	header := dc
	header.Min.Y = dc.Max.Y - 30
	drawLegend(header)
	body := dc
	body.Max.Y = header.Min.Y

	panels := []struct {
		title, unit string
		buckets     []store.Bucket
		every       int
	}{
		{"Last 24 hours, an hour a bar", "hours ago", day, 6},
		{"Last 7 days, a day a bar", "days ago", week, 1},
	}
	var plots [][]*plot.Plot
	var parts [2][3]plotter.Values
	for i, p := range panels {
		parts[i] = stacks(p.buckets)
		plots = append(plots, []*plot.Plot{newPanel(p.title, p.unit, len(p.buckets), p.every, parts[i])})
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: 8, PadY: 14, PadTop: 6, PadBottom: 4, PadLeft: 4, PadRight: 12}
	canvases := plot.Align(plots, tiles, body)
	for i, row := range plots {
		p, pc := row[0], canvases[i][0]
		data := p.DataCanvas(pc)
		if err := addBars(p, parts[i], data); err != nil {
			return nil, lay, err
		}
		p.Draw(pc)
		lay.Panels[i] = panelLayout(p, data, len(parts[i][0]))
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, lay, fmt.Errorf("encode the chart: %w", err)
	}
	return buf.Bytes(), lay, nil
}

// stacks splits each bucket's turns into the three kinds.
func stacks(buckets []store.Bucket) [3]plotter.Values {
	var out [3]plotter.Values
	for k := range out {
		out[k] = make(plotter.Values, len(buckets))
	}
	for i, b := range buckets {
		for _, c := range b.Turns {
			out[kindOfOutcome(c.Name)][i] += float64(c.N)
		}
	}
	return out
}

// newPanel is one panel's plot, its bars not yet added: n bars, the x
// axis counting back from now in unit, a label every every bars.
func newPanel(title, unit string, n, every int, parts [3]plotter.Values) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(15)
	p.Title.TextStyle.Font.Weight = xfont.WeightBold
	p.X.Label.Text = unit
	p.Y.Label.Text = "turns"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(13)
		a.Tick.Label.Font = sans(12)
	}
	// Bars sit on the whole numbers 0..n-1; the axis runs from the left
	// edge of the first to the right edge of the last.
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Marker = agoTicks{n: n, every: every}
	top := 0.0
	for i := range parts[0] {
		top = math.Max(top, parts[0][i]+parts[1][i]+parts[2][i])
	}
	p.Y.Min, p.Y.Max = 0, wholeTop(top)
	p.Y.Tick.Marker = wholeTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// addBars adds the stacked bars to p, as wide as the drawing area allows.
func addBars(p *plot.Plot, parts [3]plotter.Values, data draw.Canvas) error {
	n := len(parts[0])
	if n == 0 {
		return nil
	}
	width := (data.Max.X - data.Min.X) / vg.Length(n) * 0.8
	var below *plotter.BarChart
	for k, vs := range parts {
		bars, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return fmt.Errorf("draw the chart's bars: %w", err)
		}
		bars.Color = Colors[k]
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		p.Add(bars)
		below = bars
	}
	return nil
}

// drawLegend writes the three colours and what they mean in a row.
func drawLegend(c draw.Canvas) {
	w := (c.Max.X - c.Min.X) / 3
	for k, name := range kinds {
		l := plot.NewLegend()
		l.TextStyle.Font = sans(13)
		l.Top, l.Left = true, true
		l.ThumbnailWidth = 14
		bars, _ := plotter.NewBarChart(plotter.Values{1}, 1)
		bars.Color, bars.LineStyle.Width = Colors[k], 0
		l.Add(name, bars)
		cell := c
		cell.Min.X = c.Min.X + vg.Length(k)*w + 12
		cell.Max.X = cell.Min.X + w
		cell.Max.Y -= 8
		l.Draw(cell)
	}
}

// sans is the chart's type, Liberation Sans (built into the plot
// package), at size points: plainer than the default serif on a phone.
func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// panelLayout is where p drew its n bars on data, in pixels.
func panelLayout(p *plot.Plot, data draw.Canvas, n int) Panel {
	px := func(l vg.Length) float64 { return l.Points() * chartDPI / 72 }
	height := px(chartHeight)
	y := func(v float64) float64 { return height - px(data.Y(p.Y.Norm(v))) }
	out := Panel{Base: int(math.Round(y(0))), Unit: y(0) - y(1)}
	for i := range n {
		out.BarX = append(out.BarX, int(px(data.X(p.X.Norm(float64(i))))))
	}
	return out
}

// wholeTop is the y axis' top for a tallest bar of top turns: a little
// above it, and at least 1.
func wholeTop(top float64) float64 {
	if top < 1 {
		return 1
	}
	return top * 1.1
}

// wholeTicks marks whole numbers of turns, at most about six of them.
type wholeTicks struct{}

// Ticks returns the ticks between lo and hi.
func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000} {
		step = s
		if (hi-lo)/s <= 6 {
			break
		}
	}
	for (hi-lo)/step > 6 {
		step *= 10
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// agoTicks marks the edges between bars, every every bars, with how long
// ago they are: n at the left edge, "now" at the right.
type agoTicks struct{ n, every int }

// Ticks returns the ticks of the edges.
func (t agoTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for k := 0; k <= t.n; k++ {
		label := ""
		if (t.n-k)%t.every == 0 {
			label = strconv.Itoa(t.n - k)
			if k == t.n {
				label = "now"
			}
		}
		ticks = append(ticks, plot.Tick{Value: float64(k) - 0.5, Label: label})
	}
	return ticks
}

// Bounds reports the chart's size in pixels.
func Bounds() image.Rectangle {
	return image.Rect(0, 0, int(math.Round(chartWidth.Points()*chartDPI/72)), int(math.Round(chartHeight.Points()*chartDPI/72)))
}
