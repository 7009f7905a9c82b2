package agent

// KeptSize is how many bytes of how many conversations a's turns keep
// between them.
func KeptSize(a *Agent) (bytes, convs int) {
	if a.kept == nil {
		return 0, 0
	}
	return a.kept.size()
}

// NoteCancelled ends a stopped turn in the history.
const NoteCancelled = noteCancelled
