//go:build !linux

package hub

// waitExit returns when the connection is closed: without waitid(WNOWAIT)
// a crash is noticed by the next request instead.
func waitExit(_ int, closed <-chan struct{}) {
	<-closed
}
