// Package helmtest holds a fake cluster made of Helm's and client-go's
// fakes (FakeCluster) for the engine's unit tests. The end-to-end scenarios
// run on a real API server instead (package kubetest).
package helmtest
