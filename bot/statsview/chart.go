package statsview

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"

	"github.com/mcpgram/mcpgram/store"
)

// /stats' chart: turns over time, where bars read better than a column
// of numbers. Drawn with the standard library alone, so it carries no
// text: the caption says what the panels and colours are.

// Colours of the chart; a turn is answered (an answer, a question or an
// approval request), failed (an error, the turn limit), or stopped
// (cancelled, refused over the budget).
var (
	chartBackground = color.RGBA{0xff, 0xff, 0xff, 0xff}
	chartGrid       = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	chartAxis       = color.RGBA{0x88, 0x88, 0x88, 0xff}
	chartAnswered   = color.RGBA{0x2e, 0x9e, 0x4f, 0xff}
	chartFailed     = color.RGBA{0xd6, 0x3c, 0x3c, 0xff}
	chartStopped    = color.RGBA{0xa8, 0xa8, 0xa8, 0xff}
)

// Geometry of the chart, in pixels: two panels, one above the other.
const (
	chartWidth  = 720
	chartMargin = 24
	chartPanel  = 220 // a panel's height
	chartGap    = 40
	chartHeight = 2*chartMargin + 2*chartPanel + chartGap
)

// Panels are the panels' rectangles, top (the day) then bottom (the
// week).
var Panels = [2]image.Rectangle{
	image.Rect(chartMargin, chartMargin, chartWidth-chartMargin, chartMargin+chartPanel),
	image.Rect(chartMargin, chartMargin+chartPanel+chartGap, chartWidth-chartMargin, chartHeight-chartMargin),
}

// Colors are the bars' colours: answered, failed, stopped.
var Colors = [3]color.RGBA{chartAnswered, chartFailed, chartStopped}

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

// Chart draws day and week as bars, oldest on the left; each panel
// is scaled to its own tallest bar. It returns the PNG and the tallest
// bar of each panel.
func Chart(day, week []store.Bucket) ([]byte, [2]int64, error) {
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, chartHeight))
	draw.Draw(img, img.Bounds(), image.NewUniform(chartBackground), image.Point{}, draw.Src)
	var tallest [2]int64
	for i, buckets := range [][]store.Bucket{day, week} {
		tallest[i] = drawPanel(img, Panels[i], buckets)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, tallest, fmt.Errorf("encode the chart: %w", err)
	}
	return buf.Bytes(), tallest, nil
}

// drawPanel draws buckets as stacked bars in r, with grid lines at each
// quarter, and returns the tallest bar's turns.
func drawPanel(img *image.RGBA, r image.Rectangle, buckets []store.Bucket) int64 {
	fill := func(x0, y0, x1, y1 int, c color.Color) {
		draw.Draw(img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
	}
	for q := 1; q <= 4; q++ {
		y := r.Max.Y - q*r.Dy()/4
		fill(r.Min.X, y, r.Max.X, y+1, chartGrid)
	}
	fill(r.Min.X, r.Max.Y, r.Max.X, r.Max.Y+2, chartAxis)
	parts := make([][3]int64, len(buckets))
	var top int64
	for i, b := range buckets {
		for _, c := range b.Turns {
			parts[i][kindOfOutcome(c.Name)] += c.N
		}
		top = max(top, parts[i][0]+parts[i][1]+parts[i][2])
	}
	if top == 0 || len(buckets) == 0 {
		return 0
	}
	slot := r.Dx() / len(buckets)
	gap := max(slot/5, 1)
	for i, p := range parts {
		x0 := r.Min.X + i*slot + gap/2
		x1 := x0 + slot - gap
		y := r.Max.Y
		var sum int64
		for k, n := range p {
			if n == 0 {
				continue
			}
			sum += n
			// Heights from the running sum, so rounding never makes a
			// stack taller than its total.
			yTop := r.Max.Y - int(sum*int64(r.Dy())/top)
			if yTop >= y {
				yTop = y - 1 // a part too small to show still shows
			}
			fill(x0, yTop, x1, y, Colors[k])
			y = yTop
		}
	}
	return top
}
