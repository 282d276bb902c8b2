package outputs

// The series ceiling writes (docs/outputs.md). Every one carries the labels
// run_id and step; those per scenario also scenario.
const (
	// RequestsTotal counts exchanges by outcome (ok, failed, limited), per
	// scenario: a counter within a step.
	RequestsTotal = "ceiling_requests_total"
	// TargetRate is the open model's target rate, per second.
	TargetRate = "ceiling_target_rate"
	// AchievedRate is the responses finished in the window per second, over
	// the last second.
	AchievedRate = "ceiling_achieved_rate"
	// LatencySeconds holds the last second's response-time quantiles
	// (label quantile: 0.5, 0.9, 0.99, 0.999, 1), read from its merged
	// histogram, timed from the intended start.
	LatencySeconds = "ceiling_latency_seconds"
	// LateTotal counts exchanges that started late: a counter within a step.
	LateTotal = "ceiling_late_total"
	// StepIndex is the index of the step running, from 0: its changes mark
	// the steps (the dashboard's annotations).
	StepIndex = "ceiling_step_index"
	// TargetCPURatio is the watched target's CPU, in cores (1 = one core).
	TargetCPURatio = "ceiling_target_cpu_ratio"
	// TargetRSSBytes is the watched target's resident memory.
	TargetRSSBytes = "ceiling_target_rss_bytes"
	// IterationsTotal counts each scenario's iterations by outcome (label
	// scenario): a counter within a step (a flow's iteration is one,
	// whatever its requests).
	IterationsTotal = "ceiling_iterations_total"
	// StepLatencySeconds holds a finished step's response-time quantiles
	// over its whole window (label quantile), written once when the step
	// ends: the figures of result.json, where LatencySeconds is per second.
	StepLatencySeconds = "ceiling_step_latency_seconds"
	// TagIterationsTotal counts iterations by the value of each tag key the
	// plan lists under labels: (label named as the key) and outcome: a
	// counter within a step; values past tag_limit fold into "other".
	TagIterationsTotal = "ceiling_tag_iterations_total"
	// StepDeliveryIDs is what a finished step's accepted iterations
	// delivered to the plan's sinks (label state: expected, delivered,
	// lost, duplicates), written when the step ends, where the plan has
	// sinks.
	StepDeliveryIDs = "ceiling_step_delivery_ids"
	// StepSockets is what became of a finished step's WebSocket sockets
	// (label state: open, opened, failed, dropped), where the plan holds
	// sockets.
	StepSockets = "ceiling_step_websocket_sockets"
)

// SeriesNames lists every series ceiling writes.
var SeriesNames = []string{RequestsTotal, TargetRate, AchievedRate, LatencySeconds, LateTotal, StepIndex, TargetCPURatio, TargetRSSBytes, IterationsTotal, StepLatencySeconds,
	TagIterationsTotal, StepDeliveryIDs, StepSockets}

// WherePresent are the series written only where the plan has what they
// count (labels, sinks, held sockets, a watched target): a plain HTTP run
// without them leaves them out.
var WherePresent = []string{TargetCPURatio, TargetRSSBytes, TagIterationsTotal, StepDeliveryIDs, StepSockets}

// Quantiles are the latency quantiles written, as their label values.
var Quantiles = []string{"0.5", "0.9", "0.99", "0.999", "1"}
