package web

import (
	"context"
	"testing"
	"time"
)

func TestProbes(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ready := func(p *Probe) bool { return p.Check(context.Background()) == nil }

	poll := NewRecentProbe("telegram", 90*time.Second)
	poll.now = clock
	if ready(poll) {
		t.Error("polling is ready before any success")
	}
	poll.OK()
	now = now.Add(80 * time.Second)
	if !ready(poll) {
		t.Error("polling is not ready 80 s after a success")
	}
	poll.Fail()
	if !ready(poll) {
		t.Error("one failure within the window makes polling unready")
	}
	now = now.Add(20 * time.Second)
	if ready(poll) {
		t.Error("polling is ready 100 s after its last success")
	}

	model := NewFailureProbe("model", 5*time.Minute)
	model.now = clock
	if !ready(model) {
		t.Error("an unused model is not ready")
	}
	model.Fail()
	if ready(model) {
		t.Error("a model whose only call failed is ready")
	}
	model.OK()
	now = now.Add(time.Hour)
	if !ready(model) {
		t.Error("an idle model whose last call worked is not ready")
	}
	model.Fail()
	now = now.Add(time.Minute)
	if err := model.Check(context.Background()); err == nil || err.Error() != "model: failing for 1m0s" {
		t.Errorf("Check = %v, want the time since the failure", err)
	}

	var none *Probe
	none.OK()
	none.Fail()
}
