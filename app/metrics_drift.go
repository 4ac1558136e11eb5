package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"strata.dev/strata/store"
)

// driftLayers is strata_drift_layers{state}: the layers that ask for drift
// detection, by what their last run found. It is read from the store at
// each scrape, so every replica serves the same numbers, whichever ran the
// runs, and a restart loses none.
type driftLayers struct {
	st   *store.Store
	desc *prometheus.Desc
}

// driftStates are always served, at 0 when no layer is in them; "pending"
// is a layer not run yet.
var driftStates = map[string]string{
	store.DriftUnknown: "pending", store.DriftClean: "clean", store.DriftDrifted: "drifted", store.DriftFailed: "failed",
}

func newDriftLayers(st *store.Store) *driftLayers {
	return &driftLayers{st: st, desc: prometheus.NewDesc("strata_drift_layers",
		"Layers with drift detection, by the state of their last run: pending, clean, drifted, failed.", []string{"state"}, nil)}
}

func (c *driftLayers) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *driftLayers) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.st.DriftCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for state, label := range driftStates {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[state]), label)
	}
}
