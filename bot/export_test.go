package bot

// What the black-box tests read of the chart of /stats.
var (
	ChartPanels = chartPanels
	ChartColors = chartColors
)
