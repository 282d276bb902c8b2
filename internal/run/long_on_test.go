//go:build long

package run

// fixedDelayLoad is the fixed-delay pipeline's load in the long set: the
// stairs a user would climb, 5, 10 and 20 users, 10 s steps.
const fixedDelayLoad = "{model: closed, vus: [5, 10, 20], step: 10s, warmup: 2s, think: 150ms}"

// longTests is true: built with -tags long.
const longTests = true
