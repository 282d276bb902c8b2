// Package trend fits robust lines to series of measurements: the
// Theil–Sen slope (the median of the slopes between every two points),
// the line through it, and the scatter of the points about that line.
// A rule that judges whether a figure "grew" uses it to tell a trend from
// its own noise: a restart, a pause or one odd reading moves a Theil–Sen
// slope little, where it would tilt a least-squares one.
//
// It is pure arithmetic: no clock, no state, safe for concurrent use.
package trend
