package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// figures prints on one line what the script checks of a result.json: the
// requests sent and completed over every step, the first step's p50 in
// milliseconds, how many agents ran it, its outcome, its size in bytes.
func figures(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: e2e figures RESULT.json")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var r struct {
		Agents  []json.RawMessage `json:"agents"`
		Outcome struct {
			Status string `json:"status"`
		} `json:"outcome"`
		Steps []struct {
			Sent      int64 `json:"sent"`
			Completed int64 `json:"completed"`
			Latency   struct {
				P50 float64 `json:"p50"`
			} `json:"latency_ms"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	var sent, completed int64
	for _, s := range r.Steps {
		sent += s.Sent
		completed += s.Completed
	}
	p50 := 0.0
	if len(r.Steps) > 0 {
		p50 = r.Steps[0].Latency.P50
	}
	fmt.Printf("%d %d %.3f %d %s %d\n", sent, completed, p50, len(r.Agents), r.Outcome.Status, len(data))
	return nil
}
