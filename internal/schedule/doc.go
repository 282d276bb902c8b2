// Package schedule holds the open model's timetables: pure functions from an
// arrival index to its intended offset from the start of a step.
//
// A Shape describes a rate profile over a finite length by its inverse
// cumulative count: At(n) is the instant by which n arrivals are due. Uniform
// places arrival i at At(i); Poisson places it at At(E1+…+Ei) with Ei drawn
// from Exp(1), the time-change construction of an inhomogeneous Poisson
// process, so both arrival processes work for every shape (constant rate,
// stairs, linear ramps).
//
// There is no clock here and no drift: offsets are computed, not accumulated
// from sleeps. The executor in package load fires arrivals at these offsets.
//
// Concurrency: Shapes and Uniform are immutable and safe for concurrent use.
// Poisson keeps a cursor so that sequential calls cost O(1); use one per
// goroutine.
package schedule
