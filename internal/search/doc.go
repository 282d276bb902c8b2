// Package search finds the edge: the highest load level (a rate, or a
// number of users) whose step passes the SLO.
//
// The Strategy is pure: it proposes the next level from the verdicts so far
// and knows nothing of time or networks. It raises the level geometrically
// from Start until a step fails, then bisects between the highest passing
// and the lowest failing level until they are within Precision of each
// other, then runs the passing level once more to confirm it. A
// confirmation that fails means the level was on the edge's noisy side: it
// becomes the new lowest failure and the narrowing goes on below it. The
// reported edge is always a level that passed when it was last run.
//
// Run drives a Strategy through a Runner, which runs one step per level.
// A step the generator could not drive (it was not holding the rate) stops
// the search: past that point the figures describe ceiling, not the target.
//
// Concurrency: a Strategy is used by one goroutine.
package search
