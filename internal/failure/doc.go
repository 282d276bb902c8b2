// Package failure holds the kinds of error that say why a command or a run
// stopped: a problem with what the user gave (InputError), a cancelled
// context (ErrInterrupted), a target that did not answer (ErrUnreachable),
// and why a run stopped after a step (a target that died, an agent lost, a
// required event that failed, a target that refused everything). Callers
// match them with errors.Is and errors.As to choose an exit code and what
// to do next; cli turns them into exit codes.
//
// It imports no package of ours, so that every layer may return and match
// these errors without depending on the layer that produced them (k8s,
// say, says "bad input" without importing run). The errors that carry a
// layer's own details (run.TargetDiedError, with the target's exit) stay
// in that layer and match a kind here.
//
// Concurrency: the values are read-only; an InputError is a plain value.
package failure
