//go:build !linux

package hub

type usage struct{ tasks, rss int64 }

// treeUsage knows nothing outside Linux: no bound is checked there.
func treeUsage(int, int) usage { return usage{} }
