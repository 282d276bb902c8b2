package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRates parses the open model's stairs as given to --rate:
// comma-separated rates per second such as "50,100,200" or "50/s, 100/s".
// Every rate is positive, finite and at most MaxRate.
func ParseRates(s string) ([]float64, error) {
	items, err := splitList("rate", s, "50,100,200")
	if err != nil {
		return nil, err
	}
	rates := make([]float64, len(items))
	for i, item := range items {
		num := strings.TrimSpace(strings.TrimSuffix(item, "/s"))
		r, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return nil, fmt.Errorf("rate %q (item %d): want a number per second such as 50 or 50/s", item, i+1)
		}
		if msg := rateProblem(r); msg != "" {
			return nil, fmt.Errorf("rate %q (item %d): %s", item, i+1, msg)
		}
		rates[i] = r
	}
	return rates, nil
}

// ParseVUs parses the closed model's stairs as given to --vus:
// comma-separated numbers of virtual users such as "10,50,100", each from 1
// to MaxVUs.
func ParseVUs(s string) ([]int, error) {
	items, err := splitList("vus", s, "10,50,100")
	if err != nil {
		return nil, err
	}
	vus := make([]int, len(items))
	for i, item := range items {
		n, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("vus %q (item %d): want a whole number of virtual users such as 10", item, i+1)
		}
		if msg := vuProblem(n); msg != "" {
			return nil, fmt.Errorf("vus %q (item %d): %s", item, i+1, msg)
		}
		vus[i] = n
	}
	return vus, nil
}

// splitList splits a comma-separated list into trimmed, non-empty items.
func splitList(what, s, example string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s: want a comma-separated list such as %s", what, example)
	}
	items := strings.Split(s, ",")
	for i, item := range items {
		items[i] = strings.TrimSpace(item)
		if items[i] == "" {
			return nil, fmt.Errorf("%s %q: item %d is empty; want a list such as %s", what, s, i+1, example)
		}
	}
	return items, nil
}

// ParseHeader parses a header as given to --header: "Name: value". The
// name is trimmed and checked like a plan's header names; the value is
// trimmed and may be empty.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q: want \"Name: value\"", s)
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if msg := headerNameProblem(name); msg != "" {
		return "", "", fmt.Errorf("header %q: %s", s, msg)
	}
	if msg := headerValueProblem(value); msg != "" {
		return "", "", fmt.Errorf("header %q: %s", s, msg)
	}
	return name, value, nil
}
