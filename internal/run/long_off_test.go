//go:build !long

package run

// fixedDelayLoad is the fixed-delay pipeline's load in the quick set: 20
// users, one short step.
const fixedDelayLoad = "{model: closed, vus: [20], step: 3s, warmup: 2s, think: 150ms}"

// longTests is false: the quick set (see long).
const longTests = false
