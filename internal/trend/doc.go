// Package trend fits robust lines to series of measurements: the
// Theil–Sen slope (the median of the slopes between every two points),
// its confidence interval (Sen's, widened when the points' deviations
// from the line are correlated one to the next), the line through it,
// the share of the variance it accounts for (R²), and the scatter of the
// points about it. A rule that judges whether a figure "grew" uses it to
// tell a trend from its own noise: a restart, a pause or one odd reading
// moves a Theil–Sen slope little, where it would tilt a least-squares one.
//
// It is pure arithmetic: no clock, no state, safe for concurrent use.
package trend
